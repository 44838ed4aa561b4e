/* The named event sets (`preset = ...`), after perfcollect's, each written
 * out as the complete list of tracepoints it enables so that a reader can see
 * exactly what a preset turns on and the unit test can pin it down.
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

static const char *const preset_default[] = {
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
	"DotNETRuntime:ExceptionThrown_V1",
	"DotNETRuntime:ExceptionCatchStart",
	"DotNETRuntime:ExceptionCatchStop",
	"DotNETRuntime:ExceptionFinallyStart",
	"DotNETRuntime:ExceptionFinallyStop",
	"DotNETRuntime:ExceptionFilterStart",
	"DotNETRuntime:ExceptionFilterStop",
	"DotNETRuntime:ExceptionThrownStop",
	"DotNETRuntime:ContentionStart_V1",
	"DotNETRuntime:ContentionStop",
	"DotNETRuntime:ContentionStop_V1",
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
	"DotNETRuntime:MethodJittingStarted",
	"DotNETRuntime:MethodJittingStarted_V1",
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
	"DotNETRuntime:GCTriggered",
	"DotNETRuntime:IncreaseMemoryPressure",
	"DotNETRuntime:DecreaseMemoryPressure",
	"DotNETRuntime:GCMarkWithType",
	"DotNETRuntime:GCPerHeapHistory_V3",
	"DotNETRuntime:GCGlobalHeapHistory_V2",
	"DotNETRuntimePrivate:GCDecision",
	"DotNETRuntimePrivate:GCDecision_V1",
	"DotNETRuntimePrivate:GCSettings",
	"DotNETRuntimePrivate:GCSettings_V1",
	"DotNETRuntimePrivate:GCPerHeapHistory",
	"DotNETRuntimePrivate:GCPerHeapHistory_V1",
	"DotNETRuntimePrivate:GCGlobalHeapHistory",
	"DotNETRuntimePrivate:GCGlobalHeapHistory_V1",
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
	"DotNETRuntime:TieredCompilationSettings",
	"DotNETRuntime:TieredCompilationPause",
	"DotNETRuntime:TieredCompilationResume",
	"DotNETRuntime:TieredCompilationBackgroundJitStart",
	"DotNETRuntime:TieredCompilationBackgroundJitStop",
	"DotNETRuntimeRundown:TieredCompilationSettingsDCStart",
	NULL,
};

static const char *const preset_gccollectonly[] = {
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
	"DotNETRuntime:GCTriggered",
	"DotNETRuntime:IncreaseMemoryPressure",
	"DotNETRuntime:DecreaseMemoryPressure",
	"DotNETRuntime:GCMarkWithType",
	"DotNETRuntime:GCPerHeapHistory_V3",
	"DotNETRuntime:GCGlobalHeapHistory_V2",
	"DotNETRuntime:GCCreateConcurrentThread_V1",
	"DotNETRuntime:GCTerminateConcurrentThread_V1",
	"DotNETRuntimePrivate:GCDecision",
	"DotNETRuntimePrivate:GCDecision_V1",
	"DotNETRuntimePrivate:GCSettings",
	"DotNETRuntimePrivate:GCSettings_V1",
	"DotNETRuntimePrivate:GCPerHeapHistory",
	"DotNETRuntimePrivate:GCPerHeapHistory_V1",
	"DotNETRuntimePrivate:GCGlobalHeapHistory",
	"DotNETRuntimePrivate:GCGlobalHeapHistory_V1",
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

static const char *const preset_gconly[] = {
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
	"DotNETRuntime:GCAllocationTick",
	"DotNETRuntime:GCAllocationTick_V1",
	"DotNETRuntime:GCAllocationTick_V2",
	"DotNETRuntime:GCAllocationTick_V3",
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
	"DotNETRuntime:PinObjectAtGCTime",
	"DotNETRuntime:GCTriggered",
	"DotNETRuntime:IncreaseMemoryPressure",
	"DotNETRuntime:DecreaseMemoryPressure",
	"DotNETRuntime:GCMarkWithType",
	"DotNETRuntime:GCJoin_V2",
	"DotNETRuntime:GCPerHeapHistory_V3",
	"DotNETRuntime:GCGlobalHeapHistory_V2",
	"DotNETRuntime:GCCreateConcurrentThread_V1",
	"DotNETRuntime:GCTerminateConcurrentThread_V1",
	"DotNETRuntimePrivate:GCDecision",
	"DotNETRuntimePrivate:GCDecision_V1",
	"DotNETRuntimePrivate:GCSettings",
	"DotNETRuntimePrivate:GCSettings_V1",
	"DotNETRuntimePrivate:GCOptimized",
	"DotNETRuntimePrivate:GCOptimized_V1",
	"DotNETRuntimePrivate:GCPerHeapHistory",
	"DotNETRuntimePrivate:GCPerHeapHistory_V1",
	"DotNETRuntimePrivate:GCGlobalHeapHistory",
	"DotNETRuntimePrivate:GCGlobalHeapHistory_V1",
	"DotNETRuntimePrivate:GCJoin",
	"DotNETRuntimePrivate:GCJoin_V1",
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
	"DotNETRuntime:MethodJittingStarted",
	"DotNETRuntime:MethodJittingStarted_V1",
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

static const char *const preset_gcwithheap[] = {
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
	"DotNETRuntime:GCAllocationTick",
	"DotNETRuntime:GCAllocationTick_V1",
	"DotNETRuntime:GCAllocationTick_V2",
	"DotNETRuntime:GCAllocationTick_V3",
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
	"DotNETRuntime:PinObjectAtGCTime",
	"DotNETRuntime:GCTriggered",
	"DotNETRuntime:IncreaseMemoryPressure",
	"DotNETRuntime:DecreaseMemoryPressure",
	"DotNETRuntime:GCMarkWithType",
	"DotNETRuntime:GCJoin_V2",
	"DotNETRuntime:GCPerHeapHistory_V3",
	"DotNETRuntime:GCGlobalHeapHistory_V2",
	"DotNETRuntime:GCCreateConcurrentThread_V1",
	"DotNETRuntime:GCTerminateConcurrentThread_V1",
	"DotNETRuntime:GCBulkSurvivingObjectRanges",
	"DotNETRuntime:GCBulkMovedObjectRanges",
	"DotNETRuntime:GCGenerationRange",
	NULL,
};

static const char *const preset_threading[] = {
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

static const char *const preset_exceptions[] = {
	"DotNETRuntime:ExceptionThrown",
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

static const char *const preset_jit[] = {
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
	"DotNETRuntime:MethodJittingStarted",
	"DotNETRuntime:MethodJittingStarted_V1",
	"DotNETRuntime:TieredCompilationSettings",
	"DotNETRuntime:TieredCompilationPause",
	"DotNETRuntime:TieredCompilationResume",
	"DotNETRuntime:TieredCompilationBackgroundJitStart",
	"DotNETRuntime:TieredCompilationBackgroundJitStop",
	"DotNETRuntimeRundown:TieredCompilationSettingsDCStart",
	NULL,
};

static const char *const preset_loader[] = {
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

	while (preset->events[n])
		n++;
	return n;
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
	for (size_t i = 0; preset->events[i]; i++)
		if ((ret = list_add(list, preset->events[i], strlen(preset->events[i]))) < 0)
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
