/* The named event sets (`preset = ...`), after perfcollect's.  Each event
 * is written here once, in runs that the presets share; presets.md writes
 * every preset out as the complete list of tracepoints it enables, so that a
 * reader sees exactly what it turns on, and the unit test holds the two
 * identical.
 *
 * Written out from perfcollect's keyword lists (microsoft/perfview,
 * src/perfcollect/perfcollect), with these differences:
 *  - perfcollect declares DotNETRuntime_LoaderKeyword twice; bash keeps the
 *    second declaration, so its loader events never include AssemblyLoad,
 *    DomainModuleLoad or the V0 ModuleLoad.  Our `loader` list is the union.
 *  - `exceptions`, `jit` and `loader` have no perfcollect switch; they are
 *    the keyword groups perfcollect's other sets are made of.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "presets.h"

/* The runs of events the presets are made of, each written once, in the
 * order perfcollect's keyword lists give them; a preset is the list of its
 * runs, in its own order. */
/* thread creation and retirement, the thread pool */
static const char *const ev_threading[] = {
	"DotNETRuntime:WorkerThreadCreate",
	"DotNETRuntime:WorkerThreadTerminate",
	"DotNETRuntime:WorkerThreadRetire",
	"DotNETRuntime:WorkerThreadUnretire",
	"DotNETRuntime:IOThreadCreate",
	"DotNETRuntime:IOThreadCreate_V1",
	"DotNETRuntime:IOThreadTerminate",
	"DotNETRuntime:IOThreadTerminate_V1",
	"DotNETRuntime:IOThreadRetire",
	"DotNETRuntime:IOThreadRetire_V1",
	"DotNETRuntime:IOThreadUnretire",
	"DotNETRuntime:IOThreadUnretire_V1",
	"DotNETRuntime:ThreadpoolSuspensionSuspendThread",
	"DotNETRuntime:ThreadpoolSuspensionResumeThread",
	"DotNETRuntime:ThreadPoolWorkerThreadStart",
	"DotNETRuntime:ThreadPoolWorkerThreadStop",
	"DotNETRuntime:ThreadPoolWorkerThreadRetirementStart",
	"DotNETRuntime:ThreadPoolWorkerThreadRetirementStop",
	"DotNETRuntime:ThreadPoolWorkerThreadAdjustmentSample",
	"DotNETRuntime:ThreadPoolWorkerThreadAdjustmentAdjustment",
	"DotNETRuntime:ThreadPoolWorkerThreadAdjustmentStats",
	"DotNETRuntime:ThreadPoolWorkerThreadWait",
	"DotNETRuntime:ThreadPoolWorkingThreadCount",
	"DotNETRuntime:ThreadPoolIOPack",
	"DotNETRuntime:GCCreateConcurrentThread_V1",
	"DotNETRuntime:GCTerminateConcurrentThread_V1",
	NULL,
};

/* thread-pool queueing and thread start (thread transfer), then the V0 exception and contention events, runtime information and EventSource */
static const char *const ev_thread_transfer[] = {
	"DotNETRuntime:ThreadPoolEnqueue",
	"DotNETRuntime:ThreadPoolDequeue",
	"DotNETRuntime:ThreadPoolIOEnqueue",
	"DotNETRuntime:ThreadPoolIODequeue",
	"DotNETRuntime:ThreadCreating",
	"DotNETRuntime:ThreadRunning",
	"DotNETRuntime:ExceptionThrown",
	"DotNETRuntime:Contention",
	"DotNETRuntime:RuntimeInformationStart",
	"DotNETRuntime:EventSource",
	NULL,
};

/* throw, catch, finally and filter */
static const char *const ev_exceptions[] = {
	"DotNETRuntime:ExceptionThrown_V1",
	"DotNETRuntime:ExceptionCatchStart",
	"DotNETRuntime:ExceptionCatchStop",
	"DotNETRuntime:ExceptionFinallyStart",
	"DotNETRuntime:ExceptionFinallyStop",
	"DotNETRuntime:ExceptionFilterStart",
	"DotNETRuntime:ExceptionFilterStop",
	"DotNETRuntime:ExceptionThrownStop",
	NULL,
};

/* lock contention start and stop */
static const char *const ev_contention[] = {
	"DotNETRuntime:ContentionStart_V1",
	"DotNETRuntime:ContentionStop",
	"DotNETRuntime:ContentionStop_V1",
	NULL,
};

/* method load/unload and their rundown */
static const char *const ev_jit_methods[] = {
	"DotNETRuntime:DCStartCompleteV2",
	"DotNETRuntime:DCEndCompleteV2",
	"DotNETRuntime:MethodDCStartV2",
	"DotNETRuntime:MethodDCEndV2",
	"DotNETRuntime:MethodDCStartVerboseV2",
	"DotNETRuntime:MethodDCEndVerboseV2",
	"DotNETRuntime:MethodLoad",
	"DotNETRuntime:MethodLoad_V1",
	"DotNETRuntime:MethodLoad_V2",
	"DotNETRuntime:MethodUnload",
	"DotNETRuntime:MethodUnload_V1",
	"DotNETRuntime:MethodUnload_V2",
	"DotNETRuntime:MethodLoadVerbose",
	"DotNETRuntime:MethodLoadVerbose_V1",
	"DotNETRuntime:MethodLoadVerbose_V2",
	"DotNETRuntime:MethodUnloadVerbose",
	"DotNETRuntime:MethodUnloadVerbose_V1",
	"DotNETRuntime:MethodUnloadVerbose_V2",
	NULL,
};

/* MethodJittingStarted */
static const char *const ev_jitting_started[] = {
	"DotNETRuntime:MethodJittingStarted",
	"DotNETRuntime:MethodJittingStarted_V1",
	NULL,
};

/* assembly, domain-module, module and app-domain load/unload */
static const char *const ev_loader[] = {
	"DotNETRuntime:ModuleDCStartV2",
	"DotNETRuntime:ModuleDCEndV2",
	"DotNETRuntime:DomainModuleLoad",
	"DotNETRuntime:DomainModuleLoad_V1",
	"DotNETRuntime:ModuleLoad",
	"DotNETRuntime:ModuleLoad_V1",
	"DotNETRuntime:ModuleLoad_V2",
	"DotNETRuntime:ModuleUnload",
	"DotNETRuntime:ModuleUnload_V1",
	"DotNETRuntime:ModuleUnload_V2",
	"DotNETRuntime:AssemblyLoad",
	"DotNETRuntime:AssemblyLoad_V1",
	"DotNETRuntime:AssemblyUnload",
	"DotNETRuntime:AssemblyUnload_V1",
	"DotNETRuntime:AppDomainLoad",
	"DotNETRuntime:AppDomainLoad_V1",
	"DotNETRuntime:AppDomainUnload",
	"DotNETRuntime:AppDomainUnload_V1",
	NULL,
};

/* collections, heap stats, segments, suspension */
static const char *const ev_gc_collections[] = {
	"DotNETRuntime:GCStart",
	"DotNETRuntime:GCStart_V1",
	"DotNETRuntime:GCStart_V2",
	"DotNETRuntime:GCEnd",
	"DotNETRuntime:GCEnd_V1",
	"DotNETRuntime:GCRestartEEEnd",
	"DotNETRuntime:GCRestartEEEnd_V1",
	"DotNETRuntime:GCHeapStats",
	"DotNETRuntime:GCHeapStats_V1",
	"DotNETRuntime:GCCreateSegment",
	"DotNETRuntime:GCCreateSegment_V1",
	"DotNETRuntime:GCFreeSegment",
	"DotNETRuntime:GCFreeSegment_V1",
	"DotNETRuntime:GCRestartEEBegin",
	"DotNETRuntime:GCRestartEEBegin_V1",
	"DotNETRuntime:GCSuspendEEEnd",
	"DotNETRuntime:GCSuspendEEEnd_V1",
	"DotNETRuntime:GCSuspendEEBegin",
	"DotNETRuntime:GCSuspendEEBegin_V1",
	NULL,
};

/* background GC threads, finalizers, root marking */
static const char *const ev_gc_threads[] = {
	"DotNETRuntime:GCCreateConcurrentThread",
	"DotNETRuntime:GCTerminateConcurrentThread",
	"DotNETRuntime:GCFinalizersEnd",
	"DotNETRuntime:GCFinalizersEnd_V1",
	"DotNETRuntime:GCFinalizersBegin",
	"DotNETRuntime:GCFinalizersBegin_V1",
	"DotNETRuntime:GCMarkStackRoots",
	"DotNETRuntime:GCMarkFinalizeQueueRoots",
	"DotNETRuntime:GCMarkHandles",
	"DotNETRuntime:GCMarkOlderGenerationRoots",
	"DotNETRuntime:FinalizeObject",
	NULL,
};

/* why a GC ran, memory pressure */
static const char *const ev_gc_triggered[] = {
	"DotNETRuntime:GCTriggered",
	"DotNETRuntime:IncreaseMemoryPressure",
	"DotNETRuntime:DecreaseMemoryPressure",
	"DotNETRuntime:GCMarkWithType",
	NULL,
};

/* per-heap and global history (public) */
static const char *const ev_gc_history[] = {
	"DotNETRuntime:GCPerHeapHistory_V3",
	"DotNETRuntime:GCGlobalHeapHistory_V2",
	NULL,
};

/* GC decision and settings */
static const char *const ev_gc_private_settings[] = {
	"DotNETRuntimePrivate:GCDecision",
	"DotNETRuntimePrivate:GCDecision_V1",
	"DotNETRuntimePrivate:GCSettings",
	"DotNETRuntimePrivate:GCSettings_V1",
	NULL,
};

/* per-heap and global history (private) */
static const char *const ev_gc_private_history[] = {
	"DotNETRuntimePrivate:GCPerHeapHistory",
	"DotNETRuntimePrivate:GCPerHeapHistory_V1",
	"DotNETRuntimePrivate:GCGlobalHeapHistory",
	"DotNETRuntimePrivate:GCGlobalHeapHistory_V1",
	NULL,
};

/* private mark phases, background GC, full-GC notification */
static const char *const ev_gc_private_marks[] = {
	"DotNETRuntimePrivate:PrvGCMarkStackRoots",
	"DotNETRuntimePrivate:PrvGCMarkStackRoots_V1",
	"DotNETRuntimePrivate:PrvGCMarkFinalizeQueueRoots",
	"DotNETRuntimePrivate:PrvGCMarkFinalizeQueueRoots_V1",
	"DotNETRuntimePrivate:PrvGCMarkHandles",
	"DotNETRuntimePrivate:PrvGCMarkHandles_V1",
	"DotNETRuntimePrivate:PrvGCMarkCards",
	"DotNETRuntimePrivate:PrvGCMarkCards_V1",
	"DotNETRuntimePrivate:BGCBegin",
	"DotNETRuntimePrivate:BGC1stNonConEnd",
	"DotNETRuntimePrivate:BGC1stConEnd",
	"DotNETRuntimePrivate:BGC2ndNonConBegin",
	"DotNETRuntimePrivate:BGC2ndNonConEnd",
	"DotNETRuntimePrivate:BGC2ndConBegin",
	"DotNETRuntimePrivate:BGC2ndConEnd",
	"DotNETRuntimePrivate:BGCPlanEnd",
	"DotNETRuntimePrivate:BGCSweepEnd",
	"DotNETRuntimePrivate:BGCDrainMark",
	"DotNETRuntimePrivate:BGCRevisit",
	"DotNETRuntimePrivate:BGCOverflow",
	"DotNETRuntimePrivate:BGCAllocWaitBegin",
	"DotNETRuntimePrivate:BGCAllocWaitEnd",
	"DotNETRuntimePrivate:GCFullNotify",
	"DotNETRuntimePrivate:GCFullNotify_V1",
	"DotNETRuntimePrivate:PrvFinalizeObject",
	"DotNETRuntimePrivate:PinPlugAtGCTime",
	NULL,
};

/* binding and loader phases, fusion, multicore JIT */
static const char *const ev_binding[] = {
	"DotNETRuntimePrivate:BindingPolicyPhaseStart",
	"DotNETRuntimePrivate:BindingPolicyPhaseEnd",
	"DotNETRuntimePrivate:BindingNgenPhaseStart",
	"DotNETRuntimePrivate:BindingNgenPhaseEnd",
	"DotNETRuntimePrivate:BindingLookupAndProbingPhaseStart",
	"DotNETRuntimePrivate:BindingLookupAndProbingPhaseEnd",
	"DotNETRuntimePrivate:LoaderPhaseStart",
	"DotNETRuntimePrivate:LoaderPhaseEnd",
	"DotNETRuntimePrivate:BindingPhaseStart",
	"DotNETRuntimePrivate:BindingPhaseEnd",
	"DotNETRuntimePrivate:BindingDownloadPhaseStart",
	"DotNETRuntimePrivate:BindingDownloadPhaseEnd",
	"DotNETRuntimePrivate:LoaderAssemblyInitPhaseStart",
	"DotNETRuntimePrivate:LoaderAssemblyInitPhaseEnd",
	"DotNETRuntimePrivate:LoaderMappingPhaseStart",
	"DotNETRuntimePrivate:LoaderMappingPhaseEnd",
	"DotNETRuntimePrivate:LoaderDeliverEventsPhaseStart",
	"DotNETRuntimePrivate:LoaderDeliverEventsPhaseEnd",
	"DotNETRuntimePrivate:FusionMessageEvent",
	"DotNETRuntimePrivate:FusionErrorCodeEvent",
	"DotNETRuntimePrivate:MulticoreJit",
	"DotNETRuntimePrivate:MulticoreJitMethodCodeReturned",
	NULL,
};

/* tiered compilation */
static const char *const ev_tiered_compilation[] = {
	"DotNETRuntime:TieredCompilationSettings",
	"DotNETRuntime:TieredCompilationPause",
	"DotNETRuntime:TieredCompilationResume",
	"DotNETRuntime:TieredCompilationBackgroundJitStart",
	"DotNETRuntime:TieredCompilationBackgroundJitStop",
	"DotNETRuntimeRundown:TieredCompilationSettingsDCStart",
	NULL,
};

/* background GC threads, V1 */
static const char *const ev_gc_threads_v1[] = {
	"DotNETRuntime:GCCreateConcurrentThread_V1",
	"DotNETRuntime:GCTerminateConcurrentThread_V1",
	NULL,
};

/* allocation ticks (verbose GC) */
static const char *const ev_gc_allocation_tick[] = {
	"DotNETRuntime:GCAllocationTick",
	"DotNETRuntime:GCAllocationTick_V1",
	"DotNETRuntime:GCAllocationTick_V2",
	"DotNETRuntime:GCAllocationTick_V3",
	NULL,
};

/* pinned objects (verbose GC) */
static const char *const ev_gc_pin_object[] = {
	"DotNETRuntime:PinObjectAtGCTime",
	NULL,
};

/* GC joins, public (verbose GC) */
static const char *const ev_gc_join[] = {
	"DotNETRuntime:GCJoin_V2",
	NULL,
};

/* GCOptimized (verbose GC) */
static const char *const ev_gc_private_optimized[] = {
	"DotNETRuntimePrivate:GCOptimized",
	"DotNETRuntimePrivate:GCOptimized_V1",
	NULL,
};

/* GC joins, private (verbose GC) */
static const char *const ev_gc_private_join[] = {
	"DotNETRuntimePrivate:GCJoin",
	"DotNETRuntimePrivate:GCJoin_V1",
	NULL,
};

/* heap survival and movement */
static const char *const ev_gc_heap_survival[] = {
	"DotNETRuntime:GCBulkSurvivingObjectRanges",
	"DotNETRuntime:GCBulkMovedObjectRanges",
	"DotNETRuntime:GCGenerationRange",
	NULL,
};

/* ExceptionThrown, V0 */
static const char *const ev_exception_thrown_v0[] = {
	"DotNETRuntime:ExceptionThrown",
	NULL,
};

static const char *const *const preset_default[] = {
	ev_threading,
	ev_thread_transfer,
	ev_exceptions,
	ev_contention,
	ev_jit_methods,
	ev_jitting_started,
	ev_loader,
	ev_gc_collections,
	ev_gc_threads,
	ev_gc_triggered,
	ev_gc_history,
	ev_gc_private_settings,
	ev_gc_private_history,
	ev_gc_private_marks,
	ev_binding,
	ev_tiered_compilation,
	NULL,
};

static const char *const *const preset_gccollectonly[] = {
	ev_gc_collections,
	ev_gc_threads,
	ev_gc_triggered,
	ev_gc_history,
	ev_gc_threads_v1,
	ev_gc_private_settings,
	ev_gc_private_history,
	ev_gc_private_marks,
	ev_exceptions,
	NULL,
};

/* The verbose GC events of the public provider, which gconly and
 * gcwithheap both start with. */
#define GC_VERBOSE_PUBLIC                                                     \
	ev_gc_collections, ev_gc_allocation_tick, ev_gc_threads, ev_gc_pin_object, \
	ev_gc_triggered, ev_gc_join, ev_gc_history, ev_gc_threads_v1

static const char *const *const preset_gconly[] = {
	GC_VERBOSE_PUBLIC,
	ev_gc_private_settings,
	ev_gc_private_optimized,
	ev_gc_private_history,
	ev_gc_private_join,
	ev_gc_private_marks,
	ev_jitting_started,
	ev_loader,
	ev_exceptions,
	NULL,
};

static const char *const *const preset_gcwithheap[] = {
	GC_VERBOSE_PUBLIC,
	ev_gc_heap_survival,
	NULL,
};

static const char *const *const preset_threading[] = {
	ev_threading,
	NULL,
};

static const char *const *const preset_exceptions[] = {
	ev_exception_thrown_v0,
	ev_exceptions,
	NULL,
};

static const char *const *const preset_jit[] = {
	ev_jit_methods,
	ev_jitting_started,
	ev_tiered_compilation,
	NULL,
};

static const char *const *const preset_loader[] = {
	ev_loader,
	NULL,
};

const struct lttng_preset lttng_presets[] = {
	{ "default",
	  "perfcollect's default: threading, thread transfer, exceptions, contention, JIT, loader, GC collections, binding, multicore JIT, tiered compilation",
	  preset_default },
	{ "gccollectonly",
	  "GC collections only, the least verbose GC set (perfcollect -gccollectonly, PerfView /GCCollectOnly)",
	  preset_gccollectonly },
	{ "gconly",
	  "verbose GC events with JIT, loader and exception events (perfcollect -gconly, PerfView /GCOnly)",
	  preset_gconly },
	{ "gcwithheap",
	  "the most verbose GC events plus heap survival and movement (perfcollect -gcwithheap)",
	  preset_gcwithheap },
	{ "threading",
	  "thread creation, retirement and thread-pool events (perfcollect -events threading)",
	  preset_threading },
	{ "exceptions",
	  "exception throw, catch, finally and filter events",
	  preset_exceptions },
	{ "jit",
	  "method JIT, method load/unload and rundown, tiered compilation",
	  preset_jit },
	{ "loader",
	  "assembly, domain-module, module and app-domain load/unload events",
	  preset_loader },
	{ NULL, NULL, NULL },
};

const struct lttng_preset *lttng_preset_find(const char *name)
{
	for (const struct lttng_preset *p = lttng_presets; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

size_t lttng_preset_size(const struct lttng_preset *preset)
{
	size_t n = 0;

	for (const char *const *const *part = preset->parts; *part; part++)
		for (const char *const *ev = *part; *ev; ev++)
			n++;
	return n;
}

const char *lttng_preset_event(const struct lttng_preset *preset, size_t i)
{
	for (const char *const *const *part = preset->parts; *part; part++)
		for (const char *const *ev = *part; *ev; ev++)
			if (i-- == 0)
				return *ev;
	return NULL;
}

/* LTTNG_SYMBOL_NAME_LEN is 256 including the terminating NUL. */
#define EVENT_NAME_MAX 255

static int list_add(struct lttng_event_list *list, const char *name, size_t len)
{
	char **grown;
	char *copy;

	for (size_t i = 0; i < list->n; i++)
		if (strlen(list->names[i]) == len && memcmp(list->names[i], name, len) == 0)
			return 0;
	copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	grown = realloc(list->names, (list->n + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	list->names = grown;
	list->names[list->n++] = copy;
	return 0;
}

static int for_each_item(const struct tracerig_list *items,
			 int (*fn)(void *arg, const char *item, size_t len, char *err,
				   size_t err_len),
			 void *arg, char *err, size_t err_len)
{
	int ret;

	for (size_t i = 0; items && i < items->n; i++)
		if ((ret = fn(arg, items->items[i], strlen(items->items[i]), err, err_len)) < 0)
			return ret;
	return 0;
}

static int add_preset(void *arg, const char *item, size_t len, char *err, size_t err_len)
{
	struct lttng_event_list *list = arg;
	const struct lttng_preset *preset = NULL;
	char names[512];
	size_t used = 0;
	int ret;

	for (const struct lttng_preset *p = lttng_presets; p->name; p++)
		if (strlen(p->name) == len && memcmp(p->name, item, len) == 0)
			preset = p;
	if (!preset) {
		for (const struct lttng_preset *p = lttng_presets; p->name && used < sizeof(names); p++)
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 used ? ", " : "", p->name);
		snprintf(err, err_len, "unknown preset '%.*s' (known presets: %s)", (int)len, item,
			 names);
		return -EINVAL;
	}
	for (const char *const *const *part = preset->parts; *part; part++)
		for (const char *const *ev = *part; *ev; ev++)
			if ((ret = list_add(list, *ev, strlen(*ev))) < 0)
				return ret;
	return 0;
}

static int add_event(void *arg, const char *item, size_t len, char *err, size_t err_len)
{
	if (len > EVENT_NAME_MAX) {
		snprintf(err, err_len, "event name '%.40s...' is longer than %d characters", item,
			 EVENT_NAME_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (isspace((unsigned char)item[i]) || !isprint((unsigned char)item[i])) {
			snprintf(err, err_len, "event name '%.*s' contains a blank or control "
				 "character (separate names with commas)", (int)len, item);
			return -EINVAL;
		}
	}
	return list_add(arg, item, len);
}

int lttng_event_list_build(struct lttng_event_list *list, const struct tracerig_list *presets,
			   const struct tracerig_list *events, char *err, size_t err_len)
{
	int ret;

	memset(list, 0, sizeof(*list));
	ret = for_each_item(presets, add_preset, list, err, err_len);
	if (ret == 0)
		ret = for_each_item(events, add_event, list, err, err_len);
	if (ret == -ENOMEM)
		snprintf(err, err_len, "out of memory");
	if (ret < 0)
		lttng_event_list_free(list);
	return ret;
}

void lttng_event_list_free(struct lttng_event_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		free(list->names[i]);
	free(list->names);
	list->names = NULL;
	list->n = 0;
}
