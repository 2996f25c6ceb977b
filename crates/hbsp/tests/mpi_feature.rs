//! Without the `mpi` feature `tests/mpi.rs` and the unit test of `src/backend/mpi.rs` compile
//! to nothing: this test says so in one line (a failure under `HETSCALE_STRICT_TESTS=1`, where
//! every test must run).
#![cfg(not(feature = "mpi"))]

#[test]
fn the_mpi_backend_s_tests_need_the_mpi_feature() {
    hetscale_testkit::skip_feature_tests(
        "the mpi backend's tests of hbsp (tests/mpi.rs, src/backend/mpi.rs)",
        hetscale_testkit::Need::MpiFeature,
    );
}
