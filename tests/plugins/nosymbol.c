/* A shared object that is not a tracerig plugin: it lacks the descriptor. */
int tracerig_test_not_a_plugin(void);
int tracerig_test_not_a_plugin(void)
{
	return 42;
}
