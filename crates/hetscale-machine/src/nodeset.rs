//! Node-sets: which nodes of a platform a run uses, as every command's `--nodes` writes it.
//!
//! | written | means |
//! |---|---|
//! | `4` | the first 4 nodes of the platform, one CPU each |
//! | `all` | every node, one CPU each |
//! | `gromit,chromus,aditi` | these nodes by name |
//! | `sunblade:3,sunfire:4,server:1` | the first 3 nodes of kind `sunblade`, the first 4 `sunfire`, ... |
//! | `server*2:1,sunblade:1` | `*N` uses N CPUs of each node picked (its marked speed counts N times) |
//! | `sunwulf*2,hpc-1` | names take `*N` too |
//!
//! A node-set is a set: the selected nodes keep the platform's order, which gives them their
//! pids, whatever order the items are written in. A node uses one CPU unless `*N` says more;
//! this is how the JPDC paper counts the Sunwulf server as `2 x 20.88` Mflop/s in `C_2`.

use std::fmt;
use std::str::FromStr;

use hetscale_out::echoed;

use crate::error::{MachineError, Result};
use crate::platform::{Machine, Platform};

/// A selection of nodes of a platform (see the module docs for the syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSet {
    /// Every node.
    All,
    /// The first `n` nodes.
    First(usize),
    /// Nodes by name or kind.
    Items(Vec<NodeSetItem>),
}

/// One comma-separated item of a node-set: `WORD[*CPUS][:COUNT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSetItem {
    /// A node name or a node kind.
    pub word: String,
    /// CPUs to use on each picked node (`*N`); one if absent.
    pub cpus: Option<u32>,
    /// Number of nodes of a kind (`:N`); one if absent.
    pub count: Option<usize>,
}

const SYNTAX: &str =
    "write a count (4), names (gromit,chromus) or kinds with counts (sunblade:3,server*2:1)";

fn invalid(message: String) -> MachineError {
    MachineError::InvalidNodeSet(message)
}

impl FromStr for NodeSet {
    type Err = MachineError;

    fn from_str(text: &str) -> Result<Self> {
        let text = text.trim();
        if text.is_empty() {
            return Err(invalid(format!("the node-set is empty: {SYNTAX}")));
        }
        // A node-set is printed as the label of its configuration: no terminal escapes.
        if let Some(problem) = crate::platform::control_character_problem(text) {
            return Err(invalid(format!("node-set {problem}")));
        }
        if text == "all" {
            return Ok(Self::All);
        }
        if let Ok(n) = text.parse::<usize>() {
            if n == 0 {
                return Err(invalid(
                    "node-set 0 selects no nodes: write a count of at least 1".into(),
                ));
            }
            return Ok(Self::First(n));
        }
        text.split(',')
            .map(|item| parse_item(text, item.trim()))
            .collect::<Result<_>>()
            .map(Self::Items)
    }
}

fn parse_item(whole: &str, item: &str) -> Result<NodeSetItem> {
    if item.is_empty() {
        return Err(invalid(format!(
            "node-set \"{}\" has an empty item: separate items with single commas, e.g. gromit,chromus",
            echoed(whole)
        )));
    }
    let (head, count) = match item.split_once(':') {
        Some((head, count)) => (
            head,
            Some(parse_number(item, count, "count", "sunblade:3")?),
        ),
        None => (item, None),
    };
    let (word, cpus) = match head.split_once('*') {
        Some((word, cpus)) => (
            word,
            Some(parse_number(item, cpus, "CPU count", "server*2")?),
        ),
        None => (head, None),
    };
    if word.is_empty() || word.contains([' ', '*', ':']) {
        return Err(invalid(format!(
            "node-set item \"{}\" has no usable node name or kind: write NAME, KIND:COUNT or NAME*CPUS",
            echoed(item)
        )));
    }
    if count == Some(0) || cpus == Some(0) {
        return Err(invalid(format!(
            "node-set item \"{}\" selects nothing: counts start at 1",
            echoed(item)
        )));
    }
    Ok(NodeSetItem {
        word: word.to_owned(),
        cpus: cpus.map(|c| c as u32),
        count: count.map(|c| c as usize),
    })
}

fn parse_number(item: &str, text: &str, what: &str, example: &str) -> Result<u64> {
    let text = text.trim();
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let problem = match text.parse::<u64>() {
        Ok(n) if n <= u64::from(u32::MAX) => return Ok(n),
        _ if digits(text) => format!("is above {}", u32::MAX),
        _ if text.strip_prefix('-').is_some_and(digits) => "is negative: it starts at 1".into(),
        _ => "is not a whole number".into(),
    };
    Err(invalid(format!(
        "node-set item \"{}\": {what} \"{}\" {problem}; write e.g. {example}",
        echoed(item),
        echoed(text)
    )))
}

impl fmt::Display for NodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => write!(f, "all"),
            Self::First(n) => write!(f, "{n}"),
            Self::Items(items) => {
                let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
                write!(f, "{}", parts.join(","))
            }
        }
    }
}

impl fmt::Display for NodeSetItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.word)?;
        if let Some(cpus) = self.cpus {
            write!(f, "*{cpus}")?;
        }
        if let Some(count) = self.count {
            write!(f, ":{count}")?;
        }
        Ok(())
    }
}

impl NodeSet {
    /// The selected `(node index, CPUs used)` pairs in platform order.
    pub(crate) fn resolve(&self, platform: &Platform) -> Result<Vec<(usize, u32)>> {
        let available = platform.nodes.len();
        match self {
            Self::All => Ok((0..available).map(|i| (i, 1)).collect()),
            Self::First(n) if *n <= available => Ok((0..*n).map(|i| (i, 1)).collect()),
            Self::First(n) => Err(invalid(format!(
                "node-set {n} asks for {n} nodes but platform \"{}\" has {available}: ask for at most {available}",
                platform.name
            ))),
            Self::Items(items) => resolve_items(platform, items),
        }
    }
}

impl NodeSet {
    /// Whether the set asks for more nodes than `platform` has, in all or of a kind: what
    /// the same platform replicated ([`Platform::replicated`]) could give it, where a set
    /// that names no node or kind of it, or a node twice, is wrong on any copy.
    pub fn asks_beyond(&self, platform: &Platform) -> bool {
        let items = match self {
            Self::All => return false,
            Self::First(n) => return *n > platform.nodes.len(),
            Self::Items(items) => items,
        };
        let mut asked: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for item in items {
            *asked.entry(item.word.as_str()).or_default() += item.count.unwrap_or(1);
        }
        asked.into_iter().any(|(word, asked)| {
            let available = platform
                .nodes
                .iter()
                .filter(|n| n.kind.as_deref() == Some(word))
                .count();
            available > 0 && asked > available
        })
    }
}

fn resolve_items(platform: &Platform, items: &[NodeSetItem]) -> Result<Vec<(usize, u32)>> {
    let mut cpus_used: Vec<Option<u32>> = vec![None; platform.nodes.len()];
    for item in items {
        for index in pick(platform, item, &cpus_used)? {
            let node = &platform.nodes[index];
            let cpus = item.cpus.unwrap_or(1);
            if cpus > node.cpus {
                return Err(invalid(format!(
                    "node-set item \"{}\": node \"{}\" has {} CPU(s), so use at most *{}",
                    echoed(&item.to_string()),
                    node.name,
                    node.cpus,
                    node.cpus
                )));
            }
            if cpus_used[index].replace(cpus).is_some() {
                return Err(invalid(format!(
                    "node-set selects node \"{}\" twice: list each node once",
                    node.name
                )));
            }
        }
    }
    Ok(cpus_used
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.map(|c| (i, c)))
        .collect())
}

fn pick(platform: &Platform, item: &NodeSetItem, taken: &[Option<u32>]) -> Result<Vec<usize>> {
    if let Some(index) = platform.nodes.iter().position(|n| n.name == item.word) {
        if item.count.is_some_and(|c| c != 1) {
            return Err(invalid(format!(
                "node-set item \"{}\": \"{}\" is a node name; a count only follows a kind (e.g. KIND:3)",
                echoed(&item.to_string()),
                echoed(&item.word)
            )));
        }
        return Ok(vec![index]);
    }
    let of_kind: Vec<usize> = (0..platform.nodes.len())
        .filter(|&i| platform.nodes[i].kind.as_deref() == Some(item.word.as_str()))
        .collect();
    if of_kind.is_empty() {
        return Err(unknown_word(platform, &item.word));
    }
    let wanted = item.count.unwrap_or(1);
    let free: Vec<usize> = of_kind
        .iter()
        .copied()
        .filter(|&i| taken[i].is_none())
        .take(wanted)
        .collect();
    if free.len() < wanted {
        return Err(invalid(format!(
            "node-set item \"{}\" asks for {wanted} nodes of kind {} but platform \"{}\" has {} ({} free): ask for fewer",
            echoed(&item.to_string()),
            item.word,
            platform.name,
            of_kind.len(),
            free.len()
        )));
    }
    Ok(free)
}

fn unknown_word(platform: &Platform, word: &str) -> MachineError {
    const SHOWN: usize = 12;
    let names: Vec<&str> = platform
        .nodes
        .iter()
        .take(SHOWN)
        .map(|n| n.name.as_str())
        .collect();
    let more = if platform.nodes.len() > SHOWN {
        ", ..."
    } else {
        ""
    };
    let kinds = platform.kinds();
    let kinds = if kinds.is_empty() {
        "none".to_owned()
    } else {
        kinds.join(", ")
    };
    invalid(format!(
        "node-set names \"{}\", which is no node or kind of platform \"{}\": kinds are {kinds}; nodes are {}{more}",
        echoed(word),
        platform.name,
        names.join(", ")
    ))
}

// Selecting nodes sits above both the platform and the node-set syntax.
impl Platform {
    /// The machine made of the nodes `set` selects, in platform order.
    pub fn select(&self, set: &NodeSet) -> Result<Machine> {
        self.validate()?;
        let picks = set.resolve(self)?;
        Ok(self.machine_of(picks))
    }

    /// The machine made of every node of the platform, one CPU each.
    pub fn all(&self) -> Result<Machine> {
        self.select(&NodeSet::All)
    }
}
