//! Symmetry and additivity properties of the estimates and counts.

use sprt::simulate::Xoshiro256;
use sprt::{Model, Pentanomial, PlayerResult, Sample, Sprt, Trinomial};

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

fn random_results(rng: &mut Xoshiro256, n: usize) -> Vec<PlayerResult> {
    (0..n)
        .map(|_| match rng.next_u64() % 3 {
            0 => PlayerResult::Win,
            1 => PlayerResult::Draw,
            _ => PlayerResult::Loss,
        })
        .collect()
}

fn count_sets() -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut rng = Xoshiro256::new(7);
    for _ in 0..200 {
        let n = 1 + rng.next_u64() % 500;
        let t = Trinomial::new(rng.next_u64() % n, rng.next_u64() % n, rng.next_u64() % n);
        samples.push(t.into());
        let p = Pentanomial::new([0; 5].map(|_| rng.next_u64() % n));
        samples.push(p.into());
    }
    samples
}

fn flipped(sample: &Sample) -> Sample {
    match sample {
        Sample::Trinomial(t) => t.flipped().into(),
        Sample::Pentanomial(p) => p.flipped().into(),
    }
}

#[test]
fn swapping_wins_and_losses_mirrors_the_estimates() {
    for sample in count_sets() {
        let e = sample.estimate();
        let m = flipped(&sample).estimate();
        assert!(close(m.score, 1.0 - e.score), "{sample:?}");
        assert!(close(m.elo, -e.elo), "{sample:?}: {} vs {}", m.elo, e.elo);
        assert!(close(m.nelo, -e.nelo), "{sample:?}");
        assert!(
            close(m.los, 1.0 - e.los) || (m.los - (1.0 - e.los)).abs() < 1e-9,
            "{sample:?}"
        );
        assert!(close(m.elo_error, e.elo_error), "{sample:?}");
        assert!(close(m.nelo_error, e.nelo_error), "{sample:?}");
        assert!(close(m.draw_ratio, e.draw_ratio), "{sample:?}");
    }
}

#[test]
fn swapping_wins_and_losses_mirrors_the_llr() {
    // H0: elo = -e1 vs H1: elo = -e0 on mirrored counts is the mirror of the test.
    for model in [Model::Logistic, Model::Normalized] {
        let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05, model).unwrap();
        let mirror = Sprt::new(-5.0, 0.0, 0.05, 0.05, model).unwrap();
        for sample in count_sets().iter().take(60) {
            let llr = sprt.llr(sample).unwrap();
            let mirrored = mirror.llr(&flipped(sample)).unwrap();
            assert!(
                (llr + mirrored).abs() < 1e-6 * (1.0 + llr.abs()),
                "{model} {sample:?}: {llr} {mirrored}"
            );
        }
    }
}

#[test]
fn merging_counts_equals_counting_everything() {
    let mut rng = Xoshiro256::new(11);
    for _ in 0..50 {
        let (n, m) = (
            (rng.next_u64() % 300) as usize * 2,
            (rng.next_u64() % 300) as usize * 2,
        );
        let a = random_results(&mut rng, n);
        let b = random_results(&mut rng, m);
        let all: Vec<_> = a.iter().chain(&b).copied().collect();
        let games = |r: &[PlayerResult]| r.iter().copied().collect::<Trinomial>();
        let pairs = |r: &[PlayerResult]| r.chunks(2).map(|c| (c[0], c[1])).collect::<Pentanomial>();
        assert_eq!(games(&a) + games(&b), games(&all));
        assert_eq!(pairs(&a) + pairs(&b), pairs(&all));
        let mut merged = pairs(&a);
        merged += pairs(&b);
        assert_eq!(merged, pairs(&all));
        assert_eq!(merged.games(), games(&all).games());
        assert!((merged.points() - games(&all).points()).abs() < 1e-9);
        let e1 = Sample::from(merged).estimate();
        let e2 = Sample::from(pairs(&all)).estimate();
        assert_eq!(e1, e2);
    }
}

#[test]
fn pentanomial_and_trinomial_agree_on_score_and_elo() {
    let mut rng = Xoshiro256::new(3);
    let results = random_results(&mut rng, 1000);
    let games: Trinomial = results.iter().copied().collect();
    let pairs: Pentanomial = results.chunks(2).map(|c| (c[0], c[1])).collect();
    let (g, p) = (games.estimate(), pairs.estimate());
    assert!(close(g.score, p.score));
    assert!(close(g.elo, p.elo));
    assert_eq!(g.games, p.games);
}
