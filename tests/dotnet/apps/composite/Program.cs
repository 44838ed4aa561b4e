// The workload of tests/dotnet/composite.sh.  Usage: Composite SECONDS
// It runs framework code (collections, LINQ, JSON, string formatting) so
// that the runtime loads many precompiled methods of the composite image,
// prints "ready PID", then spins in Spin until SECONDS have passed.  Spin
// is called once and loops: its ReadyToRun code is never replaced by the
// JIT (tiering replaces methods called often, not loops already running),
// so the samples of a recording fall in the composite image's code.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text.Json;

namespace Composite;

public static class Program
{
    public static volatile int Sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Spin(double seconds)
    {
        var sw = Stopwatch.StartNew();
        long x = 1, n = 0;
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            for (int i = 0; i < 100000; i++)
                x = x * 6364136223846793005L + 1442695040888963407L ^ (x >> 13);
            n++;
        }
        return x + n;
    }

    public static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 10;
        var d = new Dictionary<string, int>();
        for (int i = 0; i < 2000; i++)
            d[$"key-{i}"] = i;
        var list = d.Where(kv => kv.Value % 3 == 0).Select(kv => kv.Key).OrderBy(k => k).ToList();
        string json = JsonSerializer.Serialize(list.Take(20).ToArray());
        Sink = json.Length + list.Count + string.Join(",", list.Take(5)).Length;
        Console.WriteLine($"ready {Environment.ProcessId}");
        long r = Spin(seconds);
        Console.WriteLine($"done {r & 0xff}");
        return 0;
    }
}
