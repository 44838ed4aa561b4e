/* The .NET runtime's own events that tracerig counts, by their ids in the
 * runtime's provider (dotnet/runtime src/coreclr/vm/ClrEtwAll.man; the
 * same ids in TraceEvent's ClrTraceEventParser, which names them
 * Task/Opcode, e.g. GC/Start).  An id means something only with the
 * provider's name: the rundown provider reuses 143 for MethodDCStartVerbose.
 * One list for the eventpipe backend's manifest counts and `tracerig
 * report`'s runtime section. */
#ifndef TR_LIB_CLREVENTS_H
#define TR_LIB_CLREVENTS_H

#define TR_CLR_PROVIDER "Microsoft-Windows-DotNETRuntime"

enum tr_clr_event {
	TR_CLR_GC_START = 1,             /* GCStart_V2: Count u32, Depth u32, ... */
	TR_CLR_GC_END = 2,               /* GCEnd_V1 */
	TR_CLR_GC_RESTART_EE_END = 3,    /* the end of a pause */
	TR_CLR_GC_SUSPEND_EE_BEGIN = 9,  /* its start */
	TR_CLR_THREADPOOL_ADJUSTMENT = 55, /* ThreadPoolWorkerThreadAdjustmentAdjustment */
	TR_CLR_EXCEPTION_THROWN = 80,    /* ExceptionThrown_V1: type (UTF-16z), message, ... */
	TR_CLR_CONTENTION_START = 81,    /* ContentionStart_V1, _V2 */
	TR_CLR_METHOD_LOAD_VERBOSE = 143, /* MethodLoadVerbose_V1, _V2: a method's code, named */
	TR_CLR_METHOD_JITTING_STARTED = 145, /* one per compilation, tier-ups included */
};

#endif
