//! Without the `mpi` feature `tests/mpi.rs`, `tests/bench_mpi.rs` and
//! `tests/probe_collectives_mpi.rs` compile to nothing: this test says so in one line (a
//! failure under `HETSCALE_STRICT_TESTS=1`, where every test must run).
#![cfg(not(feature = "mpi"))]

#[test]
fn the_mpi_backend_s_tests_need_the_mpi_feature() {
    hetscale_testkit::skip_feature_tests(
        "the mpi backend's tests of hetscale (tests/mpi.rs, bench_mpi.rs, probe_collectives_mpi.rs)",
        hetscale_testkit::Need::MpiFeature,
    );
}
