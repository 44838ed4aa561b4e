// The ASP.NET Core workload of bench/dotnet (a minimal API).  Usage:
//   dotnet Web.dll --urls http://127.0.0.1:PORT
// Prints "ready PID" once it listens.  Each endpoint does a little of what a
// real service does per request, deterministically (its input is derived
// from the request's parameters):
//   GET  /orders?n=N   N orders made up, grouped and ranked with LINQ, the
//                      summary serialized to JSON
//   GET  /search?n=N   a compiled Regex over N log lines, matches tallied
//   POST /echo         a JSON body deserialized, transformed, serialized back
//   GET  /async?n=N    N awaited steps (Task.Yield, Task.WhenAll) building a
//                      string
//   GET  /health       "ok"
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;

var builder = WebApplication.CreateBuilder(args);
// One log line per request to the console would be most of the work.
builder.Logging.ClearProviders();
builder.Logging.AddConsole();
builder.Logging.SetMinimumLevel(LogLevel.Warning);
var app = builder.Build();

app.MapGet("/health", () => "ok");
app.MapGet("/orders", (int? n) => Work.Orders(Math.Clamp(n ?? 200, 1, 5000)));
app.MapGet("/search", (int? n) => Work.Search(Math.Clamp(n ?? 200, 1, 5000)));
app.MapPost("/echo", (Basket basket) => Work.Echo(basket));
app.MapGet("/async", async (int? n) => await Work.Steps(Math.Clamp(n ?? 8, 1, 200)));

app.Lifetime.ApplicationStarted.Register(() =>
    Console.WriteLine($"ready {Environment.ProcessId}"));
app.Run();

public sealed record Order(int Id, string Customer, string Region, decimal Amount, DateTime When, string[] Tags);
public sealed record CustomerSummary(string Customer, int Orders, decimal Total, decimal Largest, string[] TopTags);
public sealed record OrdersReply(int Count, decimal Total, Dictionary<string, decimal> ByRegion, List<CustomerSummary> Top);
public sealed record SearchReply(int Lines, int Matches, Dictionary<string, int> ByLevel, List<string> Slowest);
public sealed record Item(string Sku, int Quantity, decimal Price);
public sealed record Basket(string Customer, List<Item> Items, string? Coupon);
public sealed record Priced(string Customer, int Lines, decimal Subtotal, decimal Discount, decimal Total, List<Item> Items);
public sealed record StepsReply(int Steps, int Length, string Digest);

public static partial class Work
{
    private static readonly string[] Regions = { "north", "south", "east", "west", "centre" };
    private static readonly string[] TagWords = { "gift", "express", "bulk", "fragile", "repeat", "promo", "b2b" };
    private static readonly string[] Levels = { "INFO", "WARN", "ERROR", "DEBUG" };
    // RegexOptions.Compiled: the matcher is emitted as IL and JIT-compiled
    // (dynamic methods), as most services' regexes are.
    private static readonly Regex LogLine = new(
        @"^(?<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (?<level>[A-Z]+) \[(?<svc>[a-z\-]+)\] request (?<id>[0-9a-f]{8}) took (?<ms>\d+) ms(?: user=(?<user>\w+))?$",
        RegexOptions.Compiled | RegexOptions.CultureInvariant);

    public static OrdersReply Orders(int n)
    {
        var rng = new Random(n);
        var orders = new List<Order>(n);
        var start = new DateTime(2024, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        for (int i = 0; i < n; i++)
        {
            var tags = Enumerable.Range(0, rng.Next(0, 4)).Select(_ => TagWords[rng.Next(TagWords.Length)]).ToArray();
            orders.Add(new Order(i, $"customer-{rng.Next(40):D3}", Regions[rng.Next(Regions.Length)],
                Math.Round((decimal)(rng.NextDouble() * 500), 2), start.AddMinutes(rng.Next(500_000)), tags));
        }
        var top = orders
            .GroupBy(o => o.Customer)
            .Select(g => new CustomerSummary(g.Key, g.Count(), g.Sum(o => o.Amount), g.Max(o => o.Amount),
                g.SelectMany(o => o.Tags).GroupBy(t => t).OrderByDescending(t => t.Count()).ThenBy(t => t.Key)
                    .Take(3).Select(t => t.Key).ToArray()))
            .OrderByDescending(s => s.Total).ThenBy(s => s.Customer)
            .Take(10)
            .ToList();
        var byRegion = orders.GroupBy(o => o.Region).ToDictionary(g => g.Key, g => g.Sum(o => o.Amount));
        return new OrdersReply(orders.Count, orders.Sum(o => o.Amount), byRegion, top);
    }

    public static SearchReply Search(int n)
    {
        var rng = new Random(n * 7 + 1);
        var sb = new StringBuilder(n * 96);
        var start = new DateTime(2024, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        for (int i = 0; i < n; i++)
        {
            sb.Append(start.AddMilliseconds(rng.Next(1_000_000_000)).ToString("yyyy-MM-ddTHH:mm:ss.fffZ"))
              .Append(' ').Append(Levels[rng.Next(Levels.Length)])
              .Append(" [").Append(Regions[rng.Next(Regions.Length)]).Append("-api] request ")
              .Append(rng.Next().ToString("x8")).Append(" took ").Append(rng.Next(2000)).Append(" ms");
            if (rng.Next(3) == 0)
                sb.Append(" user=u").Append(rng.Next(100));
            if (rng.Next(10) == 0)
                sb.Append(" (garbled)");
            sb.Append('\n');
        }
        int matches = 0;
        var byLevel = new Dictionary<string, int>();
        var slow = new List<(int Ms, string Id)>();
        foreach (var line in sb.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            var m = LogLine.Match(line);
            if (!m.Success)
                continue;
            matches++;
            var level = m.Groups["level"].Value;
            byLevel[level] = byLevel.GetValueOrDefault(level) + 1;
            slow.Add((int.Parse(m.Groups["ms"].ValueSpan), m.Groups["id"].Value));
        }
        var slowest = slow.OrderByDescending(s => s.Ms).Take(5).Select(s => $"{s.Id}:{s.Ms}").ToList();
        return new SearchReply(n, matches, byLevel, slowest);
    }

    public static Priced Echo(Basket basket)
    {
        var items = basket.Items
            .Where(i => i.Quantity > 0)
            .Select(i => i with { Price = Math.Round(i.Price * (i.Quantity >= 10 ? 0.9m : 1m), 2) })
            .OrderBy(i => i.Sku, StringComparer.Ordinal)
            .ToList();
        var subtotal = items.Sum(i => i.Price * i.Quantity);
        var discount = basket.Coupon is { Length: > 0 } c && c.StartsWith("SAVE", StringComparison.Ordinal)
            ? Math.Round(subtotal * 0.05m, 2) : 0m;
        // A round trip through the serializer, as a service calling another would do.
        var json = JsonSerializer.Serialize(items);
        var again = JsonSerializer.Deserialize<List<Item>>(json)!;
        return new Priced(basket.Customer, again.Count, subtotal, discount, subtotal - discount, again);
    }

    public static async Task<StepsReply> Steps(int n)
    {
        var parts = new List<string>(n);
        for (int i = 0; i < n; i++)
        {
            await Task.Yield();
            var batch = await Task.WhenAll(Enumerable.Range(0, 4).Select(j => Piece(i, j)));
            parts.Add(string.Join(',', batch));
        }
        var all = string.Join(';', parts);
        uint h = 2166136261;
        foreach (var ch in all)
            h = (h ^ ch) * 16777619;
        return new StepsReply(n, all.Length, h.ToString("x8"));
    }

    private static async Task<string> Piece(int i, int j)
    {
        await Task.Yield();
        var words = new string[8];
        for (int k = 0; k < words.Length; k++)
            words[k] = ((i * 31 + j * 7 + k) * 2654435761u).ToString("x");
        return string.Concat(words.OrderBy(w => w, StringComparer.Ordinal)).Substring(0, 16);
    }
}
