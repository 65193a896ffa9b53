//! The default network, compiled into the binary from `engine/nets/default.nnue` and parsed
//! once on first use. Any net of the format may stand in that file: its width is read from it.

use std::sync::{Arc, OnceLock};

use super::net::Net;

/// The bytes of `engine/nets/default.nnue`.
pub static DEFAULT_NET_BYTES: &[u8] = include_bytes!("../../nets/default.nnue");

/// What the `EvalFile` option shows as its default: the embedded net.
pub const EMBEDDED_NAME: &str = "<embedded>";

/// The embedded network, parsed on the first call. The file is checked by a test of this
/// module, so parsing cannot fail in a build whose tests pass.
pub fn default_net() -> Arc<Net> {
    static NET: OnceLock<Arc<Net>> = OnceLock::new();
    NET.get_or_init(|| {
        Arc::new(Net::from_bytes(DEFAULT_NET_BYTES).expect("the embedded net is checked by tests"))
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::network::Network;

    #[test]
    fn the_embedded_net_parses() {
        let net = Network::from_bytes(DEFAULT_NET_BYTES).expect("engine/nets/default.nnue");
        assert_eq!(default_net().hidden(), net.hidden);
    }
}
