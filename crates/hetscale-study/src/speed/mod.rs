//! A node's marked speed, measured on this host: `hetscale bench`'s suite ([`marked_speed`])
//! and the `local` platform at this host's speed, measured once and cached ([`local_speed`]);
//! the CPU quota the process runs under, whose period sets how long a sample must be
//! ([`cpu_quota`]); what `hetscale bench` makes of a measurement ([`bench`](mod@bench)).

pub mod bench;
pub mod cpu_quota;
pub mod local_speed;
pub mod marked_speed;
