//! Finds the fixed-shift magic numbers of `engine::attacks::magic` (12 index bits for every
//! rook square, 9 for every bishop square) and prints them as Rust constants.
use engine::attacks::reference::*;

fn rng(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn find(sq: usize, bits: u32, mask: u64, att: fn(usize, u64) -> u64, seed: &mut u64) -> u64 {
    let mut occs = vec![];
    let mut atts = vec![];
    let mut sub = 0u64;
    loop {
        occs.push(sub);
        atts.push(att(sq, sub));
        sub = sub.wrapping_sub(mask) & mask;
        if sub == 0 {
            break;
        }
    }
    let size = 1usize << bits;
    let mut table = vec![0u64; size];
    let mut epoch = vec![0u32; size];
    for e in 1u32.. {
        let magic = rng(seed) & rng(seed) & rng(seed);
        if ((mask.wrapping_mul(magic)) >> 56).count_ones() < 6 {
            continue;
        }
        let mut ok = true;
        for i in 0..occs.len() {
            let idx = (occs[i].wrapping_mul(magic) >> (64 - bits)) as usize;
            if epoch[idx] != e {
                epoch[idx] = e;
                table[idx] = atts[i];
            } else if table[idx] != atts[i] {
                ok = false;
                break;
            }
        }
        if ok {
            return magic;
        }
    }
    unreachable!()
}

fn main() {
    let mut seed = 0x9E3779B97F4A7C15u64;
    let mut r = vec![];
    let mut b = vec![];
    for sq in 0..64 {
        r.push(find(sq, 12, rook_mask(sq), rook, &mut seed));
    }
    for sq in 0..64 {
        b.push(find(sq, 9, bishop_mask(sq), bishop, &mut seed));
    }
    let fmt = |v: &Vec<u64>| {
        v.chunks(4)
            .map(|c| {
                "    ".to_string()
                    + &c.iter()
                        .map(|m| format!("0x{:016X}", m))
                        .collect::<Vec<_>>()
                        .join(", ")
                    + ","
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    println!(
        "/// Rook magic numbers, a1 first.\npub const ROOK_MAGICS: [u64; 64] = [\n{}\n];\n",
        fmt(&r)
    );
    println!(
        "/// Bishop magic numbers, a1 first.\npub const BISHOP_MAGICS: [u64; 64] = [\n{}\n];",
        fmt(&b)
    );
}
