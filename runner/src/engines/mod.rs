//! Getting engines to play: variants from `--engine` words, spar built at a git revision or
//! with features, an engine repository built at a commit (`repo_build`), the in-process
//! builtin player and external UCI engines.

pub mod git_build;
pub mod player;
pub mod repo_build;
pub mod tablebases;
pub mod uci;
pub mod variant;

use std::time::Duration;

use crate::error::{CliError, CliResult};

use player::{BuiltinPlayer, Player};
use uci::UciPlayer;
use variant::{Source, Variant};

/// A player for `variant`: the builtin engine in-process, or its external UCI engine with
/// the given watchdog for node- and depth-limited searches.
/// An engine that cannot be started or does not speak UCI is bad input (a usage error).
pub fn make_player(variant: &Variant, stall_timeout: Duration) -> CliResult<Box<dyn Player>> {
    match &variant.source {
        Source::Builtin => Ok(Box::new(BuiltinPlayer::new(variant)?)),
        Source::Uci { .. } => Ok(Box::new(
            UciPlayer::new(variant, stall_timeout)
                .map_err(|e| CliError::usage(format!("engine '{}': {e}", variant.name)))?,
        )),
        Source::Build { .. } => Err(CliError::failure(format!(
            "engine '{}' must be built before it plays (Run::build_variants)",
            variant.name
        ))),
    }
}
