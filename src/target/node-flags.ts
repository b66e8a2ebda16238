// The V8 flags every Tenantry process runs with: the CLI's shebang (the
// container image's entry point), package.json's `start` and `tenantry`
// scripts, and the processes tests and benchmarks spawn all pass these
// (test/unit/deploy/node-flags.test.ts holds them equal). Node does not take
// them from NODE_OPTIONS.
//
// --initial-heap-size: V8 sets its first collection limits from the live
// heap, which stays small here (tens of MB) while every request allocates
// its own rows, decoded values and promises that die with it. With the
// default, the old generation was marked and compacted every 60–100 ms
// under ingest load: 0.6–0.8 of a core of background marking at 110k
// spans/s on the benchmark machine (`--trace-gc-nvp`). With 128 MB it is
// about once a second and the heap stays as small (ADR 6, "Where the rest
// goes").
export const nodeFlags: readonly string[] = ['--initial-heap-size=128'];
