// PerfViewCheck: opens a tracerig archive with PerfView's own parser,
// Microsoft.Diagnostics.Tracing.TraceEvent 4.0.0, through the same classes
// PerfView uses, and prints what that parser found, so that shell tests
// (tests/dotnet/*.sh) can assert on it.  Build it out of the source tree
// (tests/dotnet/lib-dotnet.sh: dotnet_app perfview) and run
//
//   dotnet PerfViewCheck.dll stacks ARCHIVE.trace.zip [--thread-time] [--parallel]
//                          [--grep REGEX]... [--top N] [--no-stacks]
//   dotnet PerfViewCheck.dll ctf ARCHIVE.trace.zip [--no-tracelog]
//   dotnet PerfViewCheck.dll nettrace FILE.nettrace [--method REGEX]...
//
// Exit status: 0 read; 1 TraceEvent failed on the file (message on stderr,
// "error: ..."); 2 bad command line; 3 the archive has nothing of that kind
// (no *.data.txt for stacks, no CTF for ctf): "stacks none: MESSAGE" or
// "ctf none: MESSAGE" on stdout.
//
// OUTPUT: one record per line, "KEYWORD FIELD...", fields separated by one
// space; a NAME (frame, process, event) is always the last field and runs to
// the end of the line (it may hold spaces); only a "stack" line separates
// its frames with TABs.  Numbers are invariant-culture,
// times and metrics in milliseconds with 3 decimals.  Sorted lists are by
// count descending, then name (ordinal).
//
// stacks -- what PerfView's "CPU" / "Thread Time" views of a .trace.zip hold.
//   PerfView (LinuxPerfViewData.OpenStackSourceImpl, src/PerfView/PerfViewData/LinuxPerfViewData.cs)
//   builds them with `new LinuxPerfScriptStackSource(FilePath, doThreadTime)`
//   (the sequential one; ParallelLinuxPerfScriptStackSource is only behind the
//   "PerfScript" command-line verb, here --parallel) and saves that to XML with
//   XmlStackSourceWriter, which names frames with GetFrameName(frame, true):
//   this program walks the same source the same way.  TraceEvent reads the
//   FIRST zip entry whose name ends in ".data.txt" (perf script text); zip
//   entries named perf-PID.map / *.ni.{GUID}.map (at the archive root) and
//   perfinfo-PID.map are loaded, but a map is only consulted for a frame perf
//   left as [unknown] whose module has a perfinfo-PID.map ImageLoad line: the
//   names in perf.data.txt are what PerfView shows.  Every such map is
//   parsed up front all the same, each line as "START SIZE NAME" with START
//   and SIZE in bare hex (ulong.Parse, HexNumber): one "0x..." line makes the
//   constructor throw FormatException, i.e. exit 1 here and no CPU view in
//   PerfView.
//     source CLASS                   LinuxPerfScriptStackSource or Parallel...
//     thread_time 0|1
//     entry NAME                     the zip entry TraceEvent parses
//     map NAME / perfinfo NAME       zip entries TraceEvent's mapper loads
//     archive_samples N              sample headers in that entry (counted here,
//                                    not by TraceEvent: non-blank lines that do
//                                    not start with white space or '#')
//     archive_cpus N                 distinct [CPU] fields among them
//     archive_event COUNT NAME       headers per event name (cpu-clock, sched:sched_switch)
//     samples N                      TraceEvent's sample count (SampleIndexLimit)
//     stack INDEX TIME_MS METRIC<TAB>leaf<TAB>...<TAB>root
//                                    one per sample (not with --no-stacks), frames
//                                    as TraceEvent names them, leaf first; the
//                                    last two are "Thread (TID)" and
//                                    "Process NAMES (PID)"; with --thread-time
//                                    the leaf is CPU_TIME or BLOCKED_TIME
//     walked N                       samples seen by ForEach (= samples)
//     metric_total_ms X / metric_negative N / metric_zero N
//     time_span_ms X                 largest TimeRelativeMSec
//     blocked_time_ms X              TotalBlockedTime
//     cpus N                         distinct CpuNumber of the samples
//     process PID SAMPLES NAME       from each root frame "Process NAME (PID)";
//                                    NAME is TraceEvent's: every comm seen for
//                                    the PID joined with ';' (.NET thread names
//                                    it knows left out)
//     thread TID PID SAMPLES         from the "Thread (TID)" frames
//     unknown_rule TEXT              how an unnamed frame is recognised (below)
//     unknown N                      samples with at least one unnamed frame
//     unknown_frames N               unnamed frames, all samples together
//     distinct_frames N
//     xml_invalid_frames N           distinct frame names holding a character
//                                    XML cannot carry (PerfView's XmlWriter
//                                    would throw on them; must be 0)
//     frame COUNT NAME               inclusive: samples whose stack holds NAME
//                                    (top --top N, default 200; 0 = all)
//     top COUNT NAME                 exclusive: samples whose leaf is NAME (same limit)
//     grep COUNT REGEX               per --grep: samples with a frame matching REGEX
//     match COUNT NAME               per --grep: each matching frame, inclusive
//   Unnamed frames: TraceEvent's parser turns perf's "[unknown] (module)" into
//   "module!unknown" and "[unknown] ([unknown])" into "unknown!unknown"
//   (RemoveOuterBrackets, then StackFrame.DisplayName "{Module}!{Symbol}"), and
//   InternStackSource names an invalid frame index "?!?".  So a frame counts
//   as unnamed when it is "?!?" or when, split at its first '!', the module
//   part is "unknown" or the symbol part (after an optional "[Tier]" prefix)
//   is "unknown".
//   TraceEvent 4.0.0's CPU view emits a sample when the NEXT sample on the same
//   CPU arrives (BlockedTimeAnalyzer.DoMetrics), with Metric = the gap to it in
//   ms; the last sample of each CPU is never emitted.  So for an archive of
//   cpu-kind events only, samples = archive_samples - archive_cpus (events
//   whose payload starts with sched_switch, sched_process_exit, ... are not
//   CPU samples: they count only with --thread-time).
//   --parallel (what PerfView's "PerfScript" verb and WPA use) is not what
//   the GUI shows: in TraceEvent 4.0.0 every sample has Metric 0 (the gap is
//   computed only by the thread-time analyzer), and it cuts the text into
//   chunks by peeking ahead in a FastStream that refills with one Read():
//   a deflated zip entry returns short reads, a chunk ends mid-sample and the
//   rest of the next chunk is dropped (a plain or stored perf.data.txt reads
//   whole).
//
// ctf -- what PerfView's event views of a .trace.zip are built from.
//   PerfView (LinuxPerfViewData.GetTraceLog) calls
//   TraceLog.CreateFromLttngTextDataFile(archive), i.e. new
//   CtfTraceEventSource(archive) converted into an ETLX TraceLog, and treats
//   any exception as "no CTF (lttng) information".  This program first reads
//   the CtfTraceEventSource itself (with the Clr, ClrPrivate, ClrRundown and
//   LinuxKernel parsers subscribed, so that every event with a CTF mapping is
//   dispatched and named), then (unless --no-tracelog) converts it as PerfView
//   does and opens the TraceLog.
//     ctf none: MESSAGE              (exit 3) constructor threw and the archive
//                                    has no entry named "metadata"
//     ctf_metadata NAME              each "metadata" entry (its directory's
//                                    channel* files are its streams)
//     pointer_size N                 8 when the directory name ends in 64-bit
//     cpus N                         TraceEvent's NumberOfProcessors
//     events N                       events dispatched
//     event COUNT PROVIDER/EVENT     per provider and event name
//     pid COUNT PID NAME             per process id, with TraceEvent's name for it
//     tracelog_events N              events in the converted TraceLog
//     tracelog_event COUNT NAME      TraceLog.Stats (what PerfView's EventStats shows)
//     tracelog_process PID NAME      TraceLog.Processes
//
// nettrace -- an EventPipe file through EventPipeEventSource (Clr and
//   ClrRundown parsers subscribed).
//     events N / event COUNT PROVIDER/EVENT / pid COUNT PID NAME as above
//     methods N                      MethodLoadVerbose, MethodDCStartVerbose and
//                                    MethodDCStopVerbose (rundown) events
//     method_names N                 distinct Namespace::Name among them
//     method_match N REGEX           how many of those match --method REGEX (each)
//     exception COUNT TYPE           ExceptionThrown events by exception type
//     lost N                         EventsLost
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.IO.Compression;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;
using Microsoft.Diagnostics.Tracing.Stacks;
using Microsoft.Diagnostics.Tracing.StackSources;

namespace PerfViewCheck;

internal sealed class UsageException : Exception
{
    public UsageException(string message) : base(message) { }
}

public static class Program
{
    private const string Usage =
        "usage: PerfViewCheck stacks ARCHIVE.trace.zip [--thread-time] [--parallel] [--grep REGEX]... [--top N] [--no-stacks]\n" +
        "       PerfViewCheck ctf ARCHIVE.trace.zip [--no-tracelog]\n" +
        "       PerfViewCheck nettrace FILE.nettrace [--method REGEX]...";

    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;
    private static TextWriter Out;

    public static int Main(string[] args)
    {
        CultureInfo.DefaultThreadCurrentCulture = Inv;
        CultureInfo.CurrentCulture = Inv;
        var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16);
        stdout.NewLine = "\n";
        Out = stdout;
        try
        {
            return Run(args);
        }
        catch (UsageException e)
        {
            Out.Flush();
            Console.Error.WriteLine("PerfViewCheck: " + e.Message);
            Console.Error.WriteLine(Usage);
            return 2;
        }
        catch (Exception e)
        {
            Out.Flush();
            Console.Error.WriteLine("error: " + e);
            return 1;
        }
        finally
        {
            Out.Flush();
        }
    }

    private static int Run(string[] args)
    {
        if (args.Length < 2)
            throw new UsageException("a command and a file are needed");
        string cmd = args[0], path = args[1];
        var rest = args.Skip(2).ToList();
        if (!File.Exists(path))
            throw new UsageException($"{path}: no such file");
        switch (cmd)
        {
            case "stacks": return Stacks(path, rest);
            case "ctf": return Ctf(path, rest);
            case "nettrace": return NetTrace(path, rest);
            default: throw new UsageException($"unknown command '{cmd}'");
        }
    }

    private static string F(double v) => v.ToString("F3", Inv);

    private static void Line(string text) => Out.WriteLine(text);

    private static IEnumerable<KeyValuePair<string, long>> Sorted(Dictionary<string, long> d) =>
        d.OrderByDescending(kv => kv.Value).ThenBy(kv => kv.Key, StringComparer.Ordinal);

    private static void Bump(Dictionary<string, long> d, string key, long by = 1)
    {
        d.TryGetValue(key, out long n);
        d[key] = n + by;
    }

    // ---------------------------------------------------------------- stacks

    // TraceEvent's LinuxPerfScriptMapper patterns (MapFilePatterns is matched
    // against the entry's full name, PerfInfoPattern against its file name).
    private static readonly Regex MapFilePattern = new(@"^perf\-[0-9]+\.map|.+\.ni\.\{.+\}\.map$");
    private static readonly Regex PerfInfoPattern = new(@"^perfinfo\-[0-9]+\.map$");
    private static readonly Regex ProcessFrame = new(@"^Process (.*) \((-?\d+)\)$", RegexOptions.Singleline);
    private static readonly Regex ThreadFrame = new(@"^Thread \((-?\d+)\)$");
    private static readonly Regex TierPrefix = new(@"^\[[A-Za-z0-9]+\]");
    // A perf script sample header: COMM PID/TID [CPU] SECS.USECS: [PERIOD] EVENT:
    private static readonly Regex Header = new(@"\s(-?\d+)(?:/(-?\d+))?\s+(?:\[(\d+)\]\s+)?(\d+\.\d+):\s*(?:(\d+)\s+)?(\S+)");

    internal static bool IsUnnamed(string frame)
    {
        if (frame == "?!?")
            return true;
        int bang = frame.IndexOf('!');
        if (bang < 0)
            return false;
        string module = frame.Substring(0, bang);
        string symbol = TierPrefix.Replace(frame.Substring(bang + 1), "");
        return module == "unknown" || symbol == "unknown";
    }

    // PerfView saves the stack source as XML (XmlStackSourceWriter, an
    // XmlWriter that checks characters): a frame name with a character XML
    // cannot hold makes that writer throw, and the view does not open.
    private static bool IsXmlText(string s)
    {
        try
        {
            System.Xml.XmlConvert.VerifyXmlChars(s);
            return true;
        }
        catch (System.Xml.XmlException)
        {
            return false;
        }
    }

    private static int Stacks(string path, List<string> args)
    {
        bool threadTime = false, parallel = false, printStacks = true;
        int top = 200;
        var greps = new List<Regex>();
        for (int i = 0; i < args.Count; i++)
        {
            switch (args[i])
            {
                case "--thread-time": threadTime = true; break;
                case "--parallel": parallel = true; break;
                case "--no-stacks": printStacks = false; break;
                case "--top":
                    if (++i >= args.Count || !int.TryParse(args[i], NumberStyles.None, Inv, out top))
                        throw new UsageException("--top needs a number");
                    break;
                case "--grep":
                    if (++i >= args.Count)
                        throw new UsageException("--grep needs a regular expression");
                    greps.Add(new Regex(args[i], RegexOptions.CultureInvariant));
                    break;
                default: throw new UsageException($"unknown option '{args[i]}'");
            }
        }

        ArchiveSide(path);

        LinuxPerfScriptStackSource source;
        try
        {
            source = parallel
                ? new ParallelLinuxPerfScriptStackSource(path, threadTime)
                : new LinuxPerfScriptStackSource(path, threadTime);
        }
        catch (ApplicationException e) when (e.Message.Contains(".data.txt"))
        {
            Line("stacks none: " + e.Message);
            return 3;
        }

        Line("source " + source.GetType().Name);
        Line("thread_time " + (threadTime ? 1 : 0));
        Line("samples " + source.SampleIndexLimit.ToString(Inv));

        var names = new Dictionary<StackSourceFrameIndex, string>();
        string Name(StackSourceFrameIndex f)
        {
            if (!names.TryGetValue(f, out string n))
                names[f] = n = source.GetFrameName(f, true);
            return n;
        }

        long walked = 0, unknownSamples = 0, unknownFrames = 0, negative = 0, zero = 0;
        var xmlInvalid = new HashSet<string>(StringComparer.Ordinal);
        double metricTotal = 0, span = 0;
        var inclusive = new Dictionary<string, long>(StringComparer.Ordinal);
        var exclusive = new Dictionary<string, long>(StringComparer.Ordinal);
        var processes = new Dictionary<string, long>(StringComparer.Ordinal);   // "PID NAME"
        var threads = new Dictionary<string, long>(StringComparer.Ordinal);     // "TID PID"
        var cpus = new HashSet<int>();
        var grepSamples = new long[greps.Count];
        var frames = new List<string>();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var sb = new StringBuilder();

        source.ForEach(sample =>
        {
            walked++;
            frames.Clear();
            for (var s = sample.StackIndex; s != StackSourceCallStackIndex.Invalid; s = source.GetCallerIndex(s))
                frames.Add(Name(source.GetFrameIndex(s)));

            metricTotal += sample.Metric;
            if (sample.Metric < 0) negative++;
            if (sample.Metric == 0) zero++;
            if (sample.TimeRelativeMSec > span) span = sample.TimeRelativeMSec;
            cpus.Add(source.GetLinuxPerfScriptSampleByIndex(sample.SampleIndex).CpuNumber);

            if (printStacks)
            {
                sb.Clear();
                sb.Append("stack ").Append(((int)sample.SampleIndex).ToString(Inv)).Append(' ')
                  .Append(F(sample.TimeRelativeMSec)).Append(' ').Append(F(sample.Metric));
                foreach (var f in frames)
                    sb.Append('\t').Append(f);
                Line(sb.ToString());
            }

            string pid = "?", pname = "?", tid = "?";
            bool unnamed = false;
            seen.Clear();
            foreach (var f in frames)
            {
                if (seen.Add(f))
                {
                    Bump(inclusive, f);
                    if (!IsXmlText(f))
                        xmlInvalid.Add(f);
                }
                if (IsUnnamed(f))
                {
                    unnamed = true;
                    unknownFrames++;
                }
                var pm = ProcessFrame.Match(f);
                if (pm.Success) { pid = pm.Groups[2].Value; pname = pm.Groups[1].Value; }
                var tm = ThreadFrame.Match(f);
                if (tm.Success) tid = tm.Groups[1].Value;
            }
            if (unnamed) unknownSamples++;
            Bump(exclusive, frames.Count > 0 ? frames[0] : "(no stack)");
            Bump(processes, pid + " " + pname);
            Bump(threads, tid + " " + pid);
            for (int g = 0; g < greps.Count; g++)
                if (seen.Any(f => greps[g].IsMatch(f)))
                    grepSamples[g]++;
        });

        Line("walked " + walked.ToString(Inv));
        Line("metric_total_ms " + F(metricTotal));
        Line("metric_negative " + negative.ToString(Inv));
        Line("metric_zero " + zero.ToString(Inv));
        Line("time_span_ms " + F(span));
        Line("blocked_time_ms " + F(source.TotalBlockedTime));
        Line("cpus " + cpus.Count.ToString(Inv));
        foreach (var kv in processes.OrderBy(kv => long.TryParse(kv.Key.Split(' ')[0], out long p) ? p : -1).ThenBy(kv => kv.Key, StringComparer.Ordinal))
        {
            int sp = kv.Key.IndexOf(' ');
            Line($"process {kv.Key.Substring(0, sp)} {kv.Value.ToString(Inv)} {kv.Key.Substring(sp + 1)}");
        }
        foreach (var kv in Sorted(threads))
        {
            var parts = kv.Key.Split(' ');
            Line($"thread {parts[0]} {parts[1]} {kv.Value.ToString(Inv)}");
        }
        Line("unknown_rule a frame is unnamed if it is \"?!?\" or, split at its first '!', the module is \"unknown\" or the symbol (less a leading [Tier]) is \"unknown\"");
        Line("unknown " + unknownSamples.ToString(Inv));
        Line("unknown_frames " + unknownFrames.ToString(Inv));
        Line("distinct_frames " + inclusive.Count.ToString(Inv));
        Line("xml_invalid_frames " + xmlInvalid.Count.ToString(Inv));
        foreach (var kv in Limit(Sorted(inclusive), top))
            Line($"frame {kv.Value.ToString(Inv)} {kv.Key}");
        foreach (var kv in Limit(Sorted(exclusive), top))
            Line($"top {kv.Value.ToString(Inv)} {kv.Key}");
        for (int g = 0; g < greps.Count; g++)
        {
            Line($"grep {grepSamples[g].ToString(Inv)} {greps[g]}");
            foreach (var kv in Sorted(inclusive).Where(kv => greps[g].IsMatch(kv.Key)))
                Line($"match {kv.Value.ToString(Inv)} {kv.Key}");
        }
        return 0;
    }

    private static IEnumerable<T> Limit<T>(IEnumerable<T> items, int top) => top > 0 ? items.Take(top) : items;

    // What TraceEvent will read from the zip, and a count of the sample
    // headers done here, independently of TraceEvent, to compare with.
    private static void ArchiveSide(string path)
    {
        if (!path.EndsWith(".zip", StringComparison.OrdinalIgnoreCase))
            return;
        using var zip = ZipFile.OpenRead(path);
        ZipArchiveEntry entry = zip.Entries.FirstOrDefault(e => e.FullName.EndsWith(".data.txt", StringComparison.OrdinalIgnoreCase));
        if (entry == null)
            return;
        Line("entry " + entry.FullName);
        foreach (var e in zip.Entries)
        {
            if (MapFilePattern.IsMatch(e.FullName))
                Line("map " + e.FullName);
            else if (PerfInfoPattern.IsMatch(Path.GetFileName(e.FullName)))
                Line("perfinfo " + e.FullName);
        }
        long samples = 0;
        var cpus = new HashSet<string>();
        var events = new Dictionary<string, long>(StringComparer.Ordinal);
        using (var reader = new StreamReader(entry.Open(), Encoding.UTF8))
        {
            string line;
            while ((line = reader.ReadLine()) != null)
            {
                if (line.Length == 0 || char.IsWhiteSpace(line[0]) || line[0] == '#')
                    continue;
                samples++;
                var m = Header.Match(line);
                if (m.Success)
                {
                    if (m.Groups[3].Success)
                        cpus.Add(m.Groups[3].Value);
                    Bump(events, m.Groups[6].Value.TrimEnd(':'));
                }
                else
                {
                    Bump(events, "(unparsed header)");
                }
            }
        }
        Line("archive_samples " + samples.ToString(Inv));
        Line("archive_cpus " + cpus.Count.ToString(Inv));
        foreach (var kv in Sorted(events))
            Line($"archive_event {kv.Value.ToString(Inv)} {kv.Key}");
    }

    // ------------------------------------------------------------------- ctf

    private static int Ctf(string path, List<string> args)
    {
        bool traceLog = true;
        foreach (var a in args)
        {
            if (a == "--no-tracelog") traceLog = false;
            else throw new UsageException($"unknown option '{a}'");
        }

        var metadata = new List<string>();
        using (var zip = ZipFile.OpenRead(path))
            metadata.AddRange(zip.Entries.Where(e => Path.GetFileName(e.FullName) == "metadata").Select(e => e.FullName));

        CtfTraceEventSource source;
        try
        {
            source = new CtfTraceEventSource(path);
        }
        catch (Exception e)
        {
            if (metadata.Count == 0)
            {
                Line("ctf none: " + e.Message);
                return 3;
            }
            throw;   // a CTF archive TraceEvent cannot open: a failure
        }

        foreach (var m in metadata)
            Line("ctf_metadata " + m);
        using (source)
        {
            Line("pointer_size " + source.PointerSize.ToString(Inv));
            Line("cpus " + source.NumberOfProcessors.ToString(Inv));
            var counts = CountEvents(source, s =>
            {
                s.Clr.All += _ => { };
                new ClrPrivateTraceEventParser(s).All += _ => { };
                new ClrRundownTraceEventParser(s).All += _ => { };
                new LinuxKernelEventParser(s).All += _ => { };
            }, null);
            counts.Print();
        }

        if (traceLog)
        {
            string dir = Path.Combine(Path.GetTempPath(), "perfviewcheck-" + Environment.ProcessId.ToString(Inv));
            Directory.CreateDirectory(dir);
            string etlx = Path.Combine(dir, "trace.etlx");
            try
            {
                TraceLog.CreateFromLttngTextDataFile(path, etlx);
                using var log = new TraceLog(etlx);
                Line("tracelog_events " + log.EventCount.ToString(Inv));
                var stats = new Dictionary<string, long>(StringComparer.Ordinal);
                foreach (TraceEventCounts c in log.Stats)
                    Bump(stats, c.ProviderName + "/" + c.EventName, c.Count);
                foreach (var kv in Sorted(stats))
                    Line($"tracelog_event {kv.Value.ToString(Inv)} {kv.Key}");
                foreach (TraceProcess p in log.Processes.OrderBy(p => p.ProcessID))
                    Line($"tracelog_process {p.ProcessID.ToString(Inv)} {p.Name}");
            }
            finally
            {
                try { Directory.Delete(dir, true); } catch (IOException) { }
            }
        }
        return 0;
    }

    // -------------------------------------------------------------- nettrace

    private static int NetTrace(string path, List<string> args)
    {
        var methodRegexes = new List<Regex>();
        for (int i = 0; i < args.Count; i++)
        {
            if (args[i] == "--method" && i + 1 < args.Count)
                methodRegexes.Add(new Regex(args[++i], RegexOptions.CultureInvariant));
            else
                throw new UsageException($"unknown option '{args[i]}'");
        }
        using var source = new EventPipeEventSource(path);
        long methods = 0;
        var methodNames = new HashSet<string>(StringComparer.Ordinal);
        var exceptions = new Dictionary<string, long>(StringComparer.Ordinal);
        var counts = CountEvents(source, s =>
        {
            s.Clr.All += _ => { };
            new ClrRundownTraceEventParser(s).All += _ => { };
        }, data =>
        {
            if (data is MethodLoadUnloadVerboseTraceData m &&
                (data.EventName.EndsWith("LoadVerbose", StringComparison.Ordinal) ||
                 data.EventName.EndsWith("DCStartVerbose", StringComparison.Ordinal) ||
                 data.EventName.EndsWith("DCStopVerbose", StringComparison.Ordinal)))
            {
                methods++;
                methodNames.Add(m.MethodNamespace + "::" + m.MethodName);
            }
            else if (data is ExceptionTraceData x)
            {
                Bump(exceptions, x.ExceptionType);
            }
        });
        counts.Print();
        Line("methods " + methods.ToString(Inv));
        Line("method_names " + methodNames.Count.ToString(Inv));
        foreach (var re in methodRegexes)
            Line($"method_match {methodNames.Count(n => re.IsMatch(n)).ToString(Inv)} {re}");
        foreach (var kv in Sorted(exceptions))
            Line($"exception {kv.Value.ToString(Inv)} {kv.Key}");
        Line("lost " + source.EventsLost.ToString(Inv));
        return 0;
    }

    // ------------------------------------------------------------ counting

    private sealed class EventCounts
    {
        public long Total;
        public readonly Dictionary<string, long> ByEvent = new(StringComparer.Ordinal);
        public readonly Dictionary<int, long> ByPid = new();
        public readonly Dictionary<int, string> PidName = new();

        public void Print()
        {
            Line("events " + Total.ToString(Inv));
            foreach (var kv in Sorted(ByEvent))
                Line($"event {kv.Value.ToString(Inv)} {kv.Key}");
            foreach (var kv in ByPid.OrderByDescending(kv => kv.Value).ThenBy(kv => kv.Key))
            {
                PidName.TryGetValue(kv.Key, out string name);
                Line($"pid {kv.Value.ToString(Inv)} {kv.Key.ToString(Inv)} {name ?? ""}".TrimEnd());
            }
        }
    }

    // Subscribes the parsers (so that their templates, and for CTF their
    // event-name mappings, are registered), then counts every dispatched
    // event once through AllEvents.
    private static EventCounts CountEvents<T>(T source, Action<T> subscribe, Action<TraceEvent> also) where T : TraceEventDispatcher
    {
        var c = new EventCounts();
        subscribe(source);
        source.AllEvents += data =>
        {
            c.Total++;
            string provider = string.IsNullOrEmpty(data.ProviderName) ? data.ProviderGuid.ToString() : data.ProviderName;
            Bump(c.ByEvent, provider + "/" + data.EventName);
            c.ByPid.TryGetValue(data.ProcessID, out long n);
            c.ByPid[data.ProcessID] = n + 1;
            if (!c.PidName.ContainsKey(data.ProcessID))
            {
                string name = data.ProcessName;
                if (!string.IsNullOrEmpty(name))
                    c.PidName[data.ProcessID] = name;
            }
            also?.Invoke(data);
        };
        source.Process();
        return c;
    }
}
