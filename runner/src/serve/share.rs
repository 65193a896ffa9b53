//! How the server's cores are shared (OpenBench's fair ratio): among the runs of the
//! highest priority present, in proportion to throughput, at least one core each; runs
//! that do not fit (more runs than cores) wait, the oldest going first.

/// One run that wants cores.
#[derive(Clone, Copy, Debug)]
pub struct Want {
    pub id: i64,
    pub priority: i64,
    pub throughput: i64,
}

/// The cores each admitted run gets, `(id, cores)` in the order of `wants` (oldest first);
/// runs not listed wait.
pub fn share(cores: usize, wants: &[Want]) -> Vec<(i64, usize)> {
    let Some(top) = wants.iter().map(|w| w.priority).max() else {
        return Vec::new();
    };
    let admitted: Vec<&Want> = wants
        .iter()
        .filter(|w| w.priority == top)
        .take(cores.max(1))
        .collect();
    let cores = cores.max(1);
    let weight = |w: &Want| w.throughput.max(1) as f64;
    let total: f64 = admitted.iter().map(|w| weight(w)).sum();
    let ideal: Vec<f64> = admitted
        .iter()
        .map(|w| cores as f64 * weight(w) / total)
        .collect();
    let mut got: Vec<usize> = ideal.iter().map(|x| (x.floor() as usize).max(1)).collect();
    // Over: take back from the largest shares (the newest first among equals).
    while got.iter().sum::<usize>() > cores {
        let i = (0..got.len())
            .filter(|&i| got[i] > 1)
            .max_by(|&a, &b| got[a].cmp(&got[b]).then(a.cmp(&b)))
            .expect("more cores given than runs admitted");
        got[i] -= 1;
    }
    // Under: the largest remainders get one more (the oldest first among equals).
    while got.iter().sum::<usize>() < cores {
        let i = (0..got.len())
            .max_by(|&a, &b| {
                let (ra, rb) = (ideal[a] - got[a] as f64, ideal[b] - got[b] as f64);
                ra.total_cmp(&rb).then(b.cmp(&a))
            })
            .expect("at least one run admitted");
        got[i] += 1;
    }
    admitted.iter().map(|w| w.id).zip(got).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Run `id`'s want.
    pub(crate) fn w(id: i64, priority: i64, throughput: i64) -> Want {
        Want {
            id,
            priority,
            throughput,
        }
    }

    #[test]
    fn cores_go_in_proportion_to_throughput() {
        assert_eq!(share(8, &[w(1, 0, 100)]), [(1, 8)]);
        assert_eq!(share(8, &[w(1, 0, 100), w(2, 0, 100)]), [(1, 4), (2, 4)]);
        assert_eq!(share(8, &[w(1, 0, 300), w(2, 0, 100)]), [(1, 6), (2, 2)]);
        // 16 × 1/3 = 5.33 each: the oldest gets the extra core.
        assert_eq!(
            share(16, &[w(1, 0, 100), w(2, 0, 100), w(3, 0, 100)]),
            [(1, 6), (2, 5), (3, 5)]
        );
        assert_eq!(share(0, &[w(1, 0, 100)]), [(1, 1)]);
    }

    #[test]
    fn every_admitted_run_gets_a_core_and_the_rest_wait() {
        assert_eq!(share(4, &[w(1, 0, 1000), w(2, 0, 1)]), [(1, 3), (2, 1)]);
        assert_eq!(
            share(2, &[w(1, 0, 100), w(2, 0, 100), w(3, 0, 100)]),
            [(1, 1), (2, 1)]
        );
    }

    #[test]
    fn only_the_highest_priority_plays() {
        assert_eq!(share(4, &[w(1, 0, 100), w(2, 5, 100)]), [(2, 4)]);
        assert_eq!(
            share(4, &[w(1, -1, 100), w(2, 2, 100), w(3, 2, 300)]),
            [(2, 1), (3, 3)]
        );
        assert!(share(4, &[]).is_empty());
    }

    #[test]
    fn the_shares_always_add_up_to_the_cores() {
        for cores in 1..20 {
            for n in 1..6 {
                let wants: Vec<Want> = (0..n).map(|i| w(i, 0, 1 + 37 * i * i)).collect();
                let got = share(cores, &wants);
                assert_eq!(got.len(), n.min(cores as i64) as usize);
                assert_eq!(got.iter().map(|g| g.1).sum::<usize>(), cores);
                assert!(got.iter().all(|g| g.1 >= 1));
            }
        }
    }
}
