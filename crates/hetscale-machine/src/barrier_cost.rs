//! `L(p)`, a barrier's cost on `p` nodes, and the stalls of supersteps that move messages:
//! a formula or a table of measured points (`[network] L` of a platform file).

use hetscale_model::hbsp::MessageStall;
use serde::{Deserialize, Serialize};

/// `L(p)`, the cost of a barrier of `p` nodes: a formula or a measured table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BarrierCostFile", into = "BarrierCostFile")]
pub enum BarrierCost {
    /// `L(p) = base_s + per_node_s * p + per_log2_node_s * log2(p)`.
    Formula {
        /// Constant term, s.
        base_s: f64,
        /// Term linear in `p`, s per node.
        per_node_s: f64,
        /// Term in `log2 p` (tree and dissemination barriers), s.
        per_log2_node_s: f64,
    },
    /// Measured `(p, L)` points, sorted by `p`; other `p` are interpolated linearly and
    /// extrapolated from the nearest two points (never below 0).
    Table(Vec<BarrierPoint>),
}

/// One measured barrier cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BarrierPoint {
    /// Number of nodes.
    pub p: usize,
    /// Barrier cost in seconds.
    #[serde(rename = "L_s")]
    pub l_s: f64,
    /// What a superstep that moves messages costs beyond `L_s` and its transfers on average,
    /// s: stalls, such as a host under a CPU quota waiting out its period, that a typical
    /// (median) transfer does not show (`probe --p2p` measures it; see
    /// `hetscale_probe::p2p_probe`). 0 where not measured.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message_stall_s: f64,
    /// The same when every one of the `p` nodes sends or receives a message in the
    /// superstep, s: it waits for all of them, so it stalls more often than a pair's
    /// (`probe --p2p` measures it). Absent: `message_stall_s`. A superstep in which some of
    /// the nodes take part is charged between the two
    /// ([`hetscale_model::hbsp::MessageStall::at`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_stall_all_s: Option<f64>,
}

impl BarrierPoint {
    /// The stall when every node moves a message: measured, or else a pair's.
    pub fn all_nodes_stall_s(&self) -> f64 {
        self.message_stall_all_s.unwrap_or(self.message_stall_s)
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The TOML shape of `L`: either `table` or the formula terms.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BarrierCostFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    table: Option<Vec<BarrierPoint>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    per_node_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    per_log2_node_s: Option<f64>,
}

impl TryFrom<BarrierCostFile> for BarrierCost {
    type Error = String;

    fn try_from(file: BarrierCostFile) -> std::result::Result<Self, String> {
        let has_formula =
            file.base_s.is_some() || file.per_node_s.is_some() || file.per_log2_node_s.is_some();
        let cost = match (file.table, has_formula) {
            (Some(_), true) => {
                return Err("network.L: give either `table` or the formula terms \
                            (base_s, per_node_s, per_log2_node_s), not both"
                    .into());
            }
            (None, false) => {
                return Err(
                    "network.L is empty: write L = { table = [{ p = 2, L_s = 1e-5 }] } \
                            or L = { base_s = 1e-5, per_node_s = 0.0 }"
                        .into(),
                );
            }
            (Some(table), false) => BarrierCost::Table(table),
            (None, true) => BarrierCost::Formula {
                base_s: file.base_s.unwrap_or(0.0),
                per_node_s: file.per_node_s.unwrap_or(0.0),
                per_log2_node_s: file.per_log2_node_s.unwrap_or(0.0),
            },
        };
        cost.validate()?;
        Ok(cost)
    }
}

impl From<BarrierCost> for BarrierCostFile {
    fn from(cost: BarrierCost) -> Self {
        match cost {
            BarrierCost::Table(table) => Self {
                table: Some(table),
                ..Self::default()
            },
            BarrierCost::Formula {
                base_s,
                per_node_s,
                per_log2_node_s,
            } => Self {
                base_s: Some(base_s),
                per_node_s: Some(per_node_s),
                per_log2_node_s: Some(per_log2_node_s),
                ..Self::default()
            },
        }
    }
}

impl BarrierCost {
    /// A barrier that costs `l_s` seconds at every `p`.
    pub fn constant(l_s: f64) -> Self {
        Self::Formula {
            base_s: l_s,
            per_node_s: 0.0,
            per_log2_node_s: 0.0,
        }
    }

    /// `L(p)` in seconds.
    pub fn at(&self, p: usize) -> f64 {
        match self {
            Self::Formula {
                base_s,
                per_node_s,
                per_log2_node_s,
            } => base_s + per_node_s * p as f64 + per_log2_node_s * (p.max(1) as f64).log2(),
            Self::Table(points) => interpolate(points, p as f64, |pt| pt.l_s).max(0.0),
        }
    }

    /// A message superstep's stall at `p` nodes (see [`BarrierPoint::message_stall_s`] and
    /// [`BarrierPoint::message_stall_all_s`]), each interpolated as `L(p)` is; none for a
    /// formula.
    pub fn message_stall_at(&self, p: usize) -> MessageStall {
        match self {
            Self::Formula { .. } => MessageStall::default(),
            Self::Table(points) => MessageStall {
                pair_s: interpolate(points, p as f64, |pt| pt.message_stall_s).max(0.0),
                all_s: interpolate(points, p as f64, BarrierPoint::all_nodes_stall_s).max(0.0),
            },
        }
    }

    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        match self {
            Self::Formula {
                base_s,
                per_node_s,
                per_log2_node_s,
            } => {
                for (key, v) in [
                    ("base_s", base_s),
                    ("per_node_s", per_node_s),
                    ("per_log2_node_s", per_log2_node_s),
                ] {
                    if !(v.is_finite() && *v >= 0.0) {
                        return Err(format!("network.L.{key} must be >= 0, got {v}"));
                    }
                }
            }
            Self::Table(points) => validate_table(points)?,
        }
        Ok(())
    }
}

fn validate_table(points: &[BarrierPoint]) -> std::result::Result<(), String> {
    if points.is_empty() {
        return Err("network.L.table is empty: add at least one { p = 2, L_s = 1e-5 }".into());
    }
    for (i, pt) in points.iter().enumerate() {
        if pt.p == 0 {
            return Err(format!("network.L.table[{i}]: p must be >= 1, got 0"));
        }
        for (key, stall) in [
            ("message_stall_s", pt.message_stall_s),
            ("message_stall_all_s", pt.all_nodes_stall_s()),
        ] {
            if !(stall.is_finite() && stall >= 0.0) {
                return Err(format!(
                    "network.L.table[{i}]: {key} must be >= 0, got {stall}"
                ));
            }
        }
        if !(pt.l_s.is_finite() && pt.l_s >= 0.0) {
            return Err(format!(
                "network.L.table[{i}]: L_s must be >= 0, got {}",
                pt.l_s
            ));
        }
        if i > 0 && points[i - 1].p >= pt.p {
            return Err(format!(
                "network.L.table[{i}]: p = {} does not increase (previous p = {}); sort the table by p",
                pt.p,
                points[i - 1].p
            ));
        }
    }
    Ok(())
}

fn interpolate(points: &[BarrierPoint], p: f64, value: impl Fn(&BarrierPoint) -> f64) -> f64 {
    if points.len() == 1 {
        return value(&points[0]);
    }
    let upper = points
        .iter()
        .position(|pt| pt.p as f64 >= p)
        .unwrap_or(points.len() - 1);
    let (a, b) = match upper {
        0 => (points[0], points[1]),
        k => (points[k - 1], points[k]),
    };
    let t = (p - a.p as f64) / (b.p as f64 - a.p as f64);
    value(&a) + t * (value(&b) - value(&a))
}
