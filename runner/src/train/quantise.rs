//! The float network rounded into the engine's quantised layout, and a scalar evaluator of
//! that layout (the formula of [`engine::nnue::network`], written out again here so that the
//! trainer checks what it writes without relying on the engine's inference).

use engine::nnue::network::{Network, MAX_OUTPUT_WEIGHT, QA, QB, SCALE};

use super::data::{Packed, MAX_PIECES};
use super::network::FloatNet;

/// The mean absolute difference (centipawns) between the float and the quantised
/// evaluations that the final check accepts.
pub const MEAN_TOLERANCE_CP: f64 = 15.0;

/// Rounds the float network: feature weights and biases ×QA, output weights ×QB (within
/// ±127), output bias ×QA·QB.
pub fn quantise(net: &FloatNet) -> Network {
    let qa = QA as f32;
    let qb = QB as f32;
    let max = f32::from(MAX_OUTPUT_WEIGHT);
    Network {
        hidden: net.hidden,
        layout: net.layout,
        feature_weights: net
            .feature_weights()
            .iter()
            .map(|w| (w * qa).round() as i16)
            .collect(),
        feature_bias: net
            .feature_bias()
            .iter()
            .map(|w| (w * qa).round() as i16)
            .collect(),
        output_weights: net
            .output_weights()
            .iter()
            .map(|w| (w * qb).round().clamp(-max, max) as i16)
            .collect(),
        output_bias: net
            .output_biases()
            .iter()
            .map(|b| (f64::from(*b) * f64::from(QA * QB)).round() as i32)
            .collect(),
    }
}

/// The quantised evaluation of `p` in centipawns (side to move), `b` its output bucket:
/// `sum = Σ u_us²·w_b + Σ u_them²·w_b'` in i32 with `u = clamp(acc, 0, QA)`, then
/// `(sum / QA + bias_b) · SCALE / (QA · QB)`.
pub fn evaluate(net: &Network, p: &Packed) -> i32 {
    let h = net.hidden;
    let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
    let n = p.features(net.layout, &mut fu, &mut ft);
    let bucket = p.output_bucket(net.layout);
    let ow = &net.output_weights[bucket * 2 * h..(bucket + 1) * 2 * h];
    let mut us: Vec<i16> = net.feature_bias.clone();
    let mut them: Vec<i16> = net.feature_bias.clone();
    for (&a, &b) in fu[..n].iter().zip(&ft[..n]) {
        let (a, b) = (usize::from(a) * h, usize::from(b) * h);
        for i in 0..h {
            us[i] = us[i].wrapping_add(net.feature_weights[a + i]);
            them[i] = them[i].wrapping_add(net.feature_weights[b + i]);
        }
    }
    let mut sum: i32 = 0;
    for (acc, w) in [(&us, &ow[..h]), (&them, &ow[h..])] {
        for (&a, &w) in acc.iter().zip(w) {
            let u = i32::from(a).clamp(0, QA);
            // u·w fits an i16 (|w| ≤ 127), as the engine's SIMD path relies on.
            sum = sum.wrapping_add(u * i32::from(w) * u);
        }
    }
    let eval =
        i64::from(sum / QA + net.output_bias[bucket]) * i64::from(SCALE) / i64::from(QA * QB);
    eval as i32
}

/// Mean and largest absolute difference (centipawns) between the float evaluation `400·y`
/// and the quantised one over `positions`.
pub fn agreement(float: &FloatNet, quantised: &Network, positions: &[Packed]) -> (f64, f64) {
    let mut total = 0.0;
    let mut max: f64 = 0.0;
    for p in positions {
        let f = f64::from(float.forward(p)) * f64::from(SCALE);
        let q = f64::from(evaluate(quantised, p));
        let d = (f - q).abs();
        total += d;
        max = max.max(d);
    }
    (total / positions.len().max(1) as f64, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::nnue::network::Layout;
    use engine::position::Position;
    use engine::types::GameResult;

    #[test]
    fn quantised_evaluation_follows_the_float_one() {
        for layout in [
            Layout::PLAIN,
            Layout::new(4, 8).unwrap(),
            Layout::new(8, 2).unwrap(),
        ] {
            quantised_follows(layout);
        }
    }

    /// The float net, its quantised form, the trainer's evaluator and the engine's inference
    /// agree on positions of every output bucket, kings on both wings.
    fn quantised_follows(layout: Layout) {
        let mut net = FloatNet::new(32, layout, 9);
        // Make the output matter: spread biases inside (0, 1) and larger output weights.
        let h = net.hidden;
        let inputs = layout.inputs();
        for i in 0..h {
            net.params[inputs * h + i] = 0.2 + 0.02 * i as f32;
        }
        let start = inputs * h + h;
        let biases = net.params.len() - layout.output_buckets;
        for i in start..biases {
            net.params[i] = (((i - start) as f32 * 0.37).sin() * 1.5).clamp(-1.98, 1.98);
        }
        for (b, i) in (biases..net.params.len()).enumerate() {
            net.params[i] = 0.1 - 0.03 * b as f32;
        }
        // Weights on the quantisation grid: the two evaluations differ only by the integer
        // divisions.
        for (i, w) in net.params.iter_mut().enumerate() {
            let scale = if i < start {
                QA as f32
            } else if i < biases {
                QB as f32
            } else {
                (QA * QB) as f32
            };
            *w = (*w * scale).round() / scale;
        }
        let q = quantise(&net);
        let bytes = q.to_bytes();
        assert_eq!(Network::from_bytes(&bytes).unwrap(), q);
        let fens = [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/8/4k3/8/1Q6/8/4K3/8 w - - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "2kr3r/ppp2ppp/2n5/8/8/2N5/PPP2PPP/1K1R3R b - - 0 1",
            "6k1/5ppp/8/8/8/8/r4PPP/1R4K1 w - - 0 1",
        ];
        let positions: Vec<Packed> = fens
            .iter()
            .map(|f| Packed::new(&Position::from_fen(f).unwrap(), 0, GameResult::Draw))
            .collect();
        let (mean, max) = agreement(&net, &q, &positions);
        let evals: Vec<f32> = positions.iter().map(|p| net.forward(p) * 400.0).collect();
        assert!(evals.iter().any(|e| e.abs() > 50.0), "{layout}: {evals:?}");
        assert!(max < 1.0, "{layout}: {mean} {max}");
        // The engine's inference of the written file gives the trainer's evaluation exactly.
        let engine_net = engine::nnue::Net::from_bytes(&bytes).unwrap();
        for (fen, p) in fens.iter().zip(&positions) {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(engine_net.evaluate(&pos), evaluate(&q, p), "{layout} {fen}");
        }
    }
}
