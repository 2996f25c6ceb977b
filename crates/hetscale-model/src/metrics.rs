//! Speed, marked speed and efficiency metrics (Sun & Rover 1994; Chen, Sun & Wu 2008; Kalinov).

use crate::error::{Result, all_positive, positive};

/// Achieved speed `S = W / T`.
pub fn speed(work: f64, time: f64) -> Result<f64> {
    Ok(positive("work", work)? / positive("time", time)?)
}

/// Average unit speed `S / p = W / (p T)` (Sun & Rover Definition 2).
pub fn average_unit_speed(work: f64, time: f64, p: usize) -> Result<f64> {
    Ok(speed(work, time)? / positive("p", p as f64)?)
}

/// Marked speed of a system, `C = sum_i C_i` (Chen, Sun & Wu Definition 1).
pub fn system_marked_speed(marked_speeds: &[f64]) -> Result<f64> {
    all_positive("marked_speed", marked_speeds)?;
    Ok(marked_speeds.iter().sum())
}

/// Speed-efficiency `E_s = W / (T C)` (Chen, Sun & Wu Definition 2). `work / time` and
/// `marked_speed` must be in the same unit (e.g. flop/s).
pub fn speed_efficiency(work: f64, time: f64, marked_speed: f64) -> Result<f64> {
    Ok(speed(work, time)? / positive("marked_speed", marked_speed)?)
}

/// Concurrent (parallel) efficiency `E = T_seq / (p T)` (Kalinov eq. 1; Kumar et al.).
pub fn concurrent_efficiency(t_seq: f64, p: usize, t_par: f64) -> Result<f64> {
    Ok(positive("t_seq", t_seq)? / (positive("p", p as f64)? * positive("time", t_par)?))
}

/// Heterogeneous concurrent efficiency `E_he = (r_seq / r_aver) E` (Kalinov eq. 2), where
/// `speeds` are the performances `r_l` of the `p` processors and `r_seq` the performance of the
/// processor that ran the sequential time `t_seq`.
pub fn heterogeneous_efficiency(t_seq: f64, r_seq: f64, speeds: &[f64], t_par: f64) -> Result<f64> {
    all_positive("r_l", speeds)?;
    let p = speeds.len();
    let r_aver = speeds.iter().sum::<f64>() / p as f64;
    Ok(positive("r_seq", r_seq)? / r_aver * concurrent_efficiency(t_seq, p, t_par)?)
}

/// Total parallel overhead `T_o = p T_p - T_seq` (Kumar et al.), the time all processors spend
/// not doing useful sequential work.
pub fn total_overhead(t_seq: f64, p: usize, t_par: f64) -> Result<f64> {
    Ok(positive("p", p as f64)? * positive("time", t_par)? - positive("t_seq", t_seq)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jpdc_table3_case_1_1() {
        // JPDC Table 3, case 1.1: N = 100, W = 661 353, T = 260.770 ms, C_2 = 62.05 Mflop/s.
        let s = speed(661_353.0, 260.770e-3).unwrap() / 1e6;
        assert!((s - 2.536).abs() < 5e-4);
        let e = speed_efficiency(661_353.0, 260.770e-3, 62.05e6).unwrap();
        assert!((e - 0.041).abs() < 5e-4);
    }

    #[test]
    fn marked_speed_sum_of_table2_example() {
        // JPDC section 4.3: server + SunBlade + 2 SunFire = 114.07 Mflop/s.
        let c = system_marked_speed(&[20.88, 20.29, 36.45, 36.45]).unwrap();
        assert!((c - 114.07).abs() < 1e-9);
    }

    #[test]
    fn bad_input_is_an_error_that_names_the_field() {
        let err = speed_efficiency(1.0, 0.0, 1.0).unwrap_err();
        assert!(err.to_string().contains("time"), "{err}");
        assert!(
            system_marked_speed(&[1.0, -2.0])
                .unwrap_err()
                .to_string()
                .contains("marked_speed")
        );
        assert!(system_marked_speed(&[]).is_err());
        assert!(speed(f64::NAN, 1.0).is_err());
        assert!(average_unit_speed(1.0, 1.0, 0).is_err());
    }

    #[test]
    fn heterogeneous_efficiency_is_one_for_ideal_time() {
        // Ideal time: T_seq r_seq / (p r_aver).
        let speeds = [1.0, 2.0, 3.0];
        let (t_seq, r_seq) = (12.0, 2.0);
        let ideal = t_seq * r_seq / 6.0;
        let e = heterogeneous_efficiency(t_seq, r_seq, &speeds, ideal).unwrap();
        assert!((e - 1.0).abs() < 1e-12);
    }
}
