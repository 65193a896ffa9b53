//! Getting engines to play: variants from `--engine` words, spar built at a git revision or
//! with features, the in-process builtin player and external UCI engines.

pub mod git_build;
pub mod player;
pub mod uci;
pub mod variant;
