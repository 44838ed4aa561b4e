// Compiled, not run (tests/dotnet/r2r-arm64.sh reads its arm64 image):
// enough use of Newtonsoft.Json that its generic code is instantiated.
using System;
using System.Collections.Generic;
using Newtonsoft.Json;

namespace R2rMap;

public sealed record Item(int Id, string Name, List<double> Values);

public static class Program
{
    public static int Main()
    {
        var items = new List<Item> { new(1, "a", new() { 1.5 }), new(2, "b", new()) };
        string json = JsonConvert.SerializeObject(items);
        var back = JsonConvert.DeserializeObject<List<Item>>(json);
        var map = JsonConvert.DeserializeObject<Dictionary<string, int>>("{\"x\":1}");
        Console.WriteLine($"{json.Length} {back?.Count} {map?["x"]}");
        return 0;
    }
}
