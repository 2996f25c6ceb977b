//! A node's marked speed, measured on this host: `hetscale bench`'s suite ([`marked_speed`])
//! and the `local` platform at this host's speed, measured once and cached ([`local_speed`]).

pub mod local_speed;
pub mod marked_speed;
