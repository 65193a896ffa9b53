//! Dumping `track!` statistics at the end of a UCI session (filled in by the track! issue).

/// The hook `spar uci` runs on quit: with the `track` feature, writes the statistics to the
/// file named by the `TrackFile` option.
pub fn quit_hook() -> engine::uci::QuitHook {
    Box::new(|_path: &str| {})
}
