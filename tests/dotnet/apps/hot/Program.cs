// The console workload of tests/dotnet.  Usage:
//   Hot SECONDS [MODE...]
// MODE is any of: cpu (default), exceptions, gc, contention, threadpool,
// idle; other words are ignored (a test's mark to find the process by).
// It prints "ready PID" once every hot method has run at least once (so a
// trace that starts after that line sees each of them), then works until
// SECONDS have passed, and prints what it did.  With idle it sleeps
// instead of working after "ready": a runtime that is only talked to
// (its diagnostics socket, its perf maps) leaves the CPUs to the rest.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text.Json;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;

namespace Hot;

public sealed record Order(int Id, string Customer, double Amount, string[] Tags);

public static class Native
{
    // Our own native library (native/hotnative.c), beside the assembly:
    // a P/Invoke into code the runtime did not compile.
    [DllImport("hotnative", EntryPoint = "hot_native_checksum")]
    public static extern uint Checksum(byte[] buf, nuint len);
}

public sealed class Accumulator<T> where T : struct
{
    private readonly Func<T, T, T> add;
    private T total;

    public Accumulator(Func<T, T, T> add) { this.add = add; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public T AddAll(IEnumerable<T> items)
    {
        foreach (var item in items)
            total = add(total, item);
        return total;
    }
}

public static class Work
{
    // Exceptions thrown by ThrowAndCatch, for the tests that count them
    // in the runtime's events.
    public static long Thrown;

    private static readonly Regex OrderPattern = new(@"customer-(\d+)-(\w+)", RegexOptions.Compiled);
    private static readonly byte[] Block = new byte[64 * 1024];

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long GenericSum(int n)
    {
        var acc = new Accumulator<long>((a, b) => a + b * 3 % 7);
        return acc.AddAll(Enumerable.Range(0, n).Select(i => (long)i));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double LinqQuery(List<Order> orders)
    {
        return orders.Where(o => o.Amount > 10)
                     .GroupBy(o => o.Customer)
                     .Select(g => g.Sum(o => o.Amount) / g.Count())
                     .OrderByDescending(x => x)
                     .Take(5)
                     .Sum();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int JsonRoundTrip(List<Order> orders)
    {
        string json = JsonSerializer.Serialize(orders);
        var back = JsonSerializer.Deserialize<List<Order>>(json);
        return back?.Count ?? 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int RegexScan(string text)
    {
        int n = 0;
        foreach (Match m in OrderPattern.Matches(text))
            n += m.Groups[2].Length;
        return n;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static uint NativeChecksum()
    {
        Block[0]++;
        return Native.Checksum(Block, (nuint)Block.Length);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task<int> AsyncChain(int depth)
    {
        if (depth == 0) {
            await Task.Yield();
            return SpinLeaf(20000);
        }
        return await AsyncChain(depth - 1) + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int SpinLeaf(int n)
    {
        int x = 1;
        for (int i = 0; i < n; i++)
            x = x * 31 + i;
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int ThrowAndCatch(int n)
    {
        int caught = 0;
        for (int i = 0; i < n; i++) {
            try {
                throw new InvalidOperationException("hot " + i);
            } catch (InvalidOperationException) {
                caught++;
                Interlocked.Increment(ref Thrown);
            }
        }
        return caught;
    }

    private static readonly List<byte[]> Survivors = new();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Allocate()
    {
        int live = 0;
        for (int i = 0; i < 2000; i++) {
            var b = new byte[1024 + i % 4096];
            if (i % 97 == 0)
                Survivors.Add(b);
            live += b.Length & 1;
        }
        if (Survivors.Count > 4000)
            Survivors.RemoveRange(0, 2000);
        return live;
    }

    private static readonly object Gate = new();
    private static long shared;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Contend(int rounds)
    {
        for (int i = 0; i < rounds; i++) {
            lock (Gate) {
                shared += SpinLeaf(200);
            }
        }
    }
}

public static class Program
{
    private static List<Order> MakeOrders()
    {
        var rnd = new Random(42);
        return Enumerable.Range(0, 400)
            .Select(i => new Order(i, "c" + rnd.Next(30), rnd.NextDouble() * 100,
                                   new[] { "t" + (i % 3), "x" }))
            .ToList();
    }

    private static void Round(List<Order> orders, string text, HashSet<string> modes, long round, ref long sink)
    {
        if (modes.Contains("cpu")) {
            sink += Work.GenericSum(20000);
            sink += (long)Work.LinqQuery(orders);
            sink += Work.JsonRoundTrip(orders);
            sink += Work.RegexScan(text);
            sink += (long)(Work.NativeChecksum() & 0xff);
            sink += Work.AsyncChain(4).GetAwaiter().GetResult();
        }
        if (modes.Contains("exceptions"))
            sink += Work.ThrowAndCatch(50);
        if (modes.Contains("gc")) {
            sink += Work.Allocate();
            if (round % 20 == 0)
                GC.Collect(2);
        }
        if (modes.Contains("contention")) {
            var t = Task.Run(() => Work.Contend(200));
            Work.Contend(200);
            t.Wait();
        }
        if (modes.Contains("threadpool")) {
            var tasks = Enumerable.Range(0, 16)
                .Select(i => Task.Run(() => { Thread.Sleep(5); return Work.SpinLeaf(1000); }))
                .ToArray();
            Task.WaitAll(tasks);
        }
    }

    public static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 5;
        var modes = new HashSet<string>(args.Skip(1));
        if (!modes.Overlaps(new[] { "cpu", "exceptions", "gc", "contention", "threadpool" }))
            modes.Add("cpu");
        var orders = MakeOrders();
        string text = string.Join(" ", Enumerable.Range(0, 200).Select(i => $"customer-{i}-name{i % 7}"));
        long sink = 0;
        long rounds = 0;

        Round(orders, text, modes, 0, ref sink);
        Console.WriteLine($"ready {Environment.ProcessId}");
        Console.Out.Flush();
        var clock = Stopwatch.StartNew();
        if (modes.Contains("idle"))
            Thread.Sleep(TimeSpan.FromSeconds(seconds));
        while (clock.Elapsed.TotalSeconds < seconds) {
            rounds++;
            Round(orders, text, modes, rounds, ref sink);
        }
        Console.WriteLine($"done rounds={rounds} gen0={GC.CollectionCount(0)} gen2={GC.CollectionCount(2)} thrown={Interlocked.Read(ref Work.Thrown)} sink={sink & 0xffff}");
        return 0;
    }
}
