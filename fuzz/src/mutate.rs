//! The smoke runner's mutator: byte-level edits of a seed, biased toward what breaks
//! parsers (boundary numbers, the grammar's own tokens, long repeats). No coverage guidance:
//! that is libFuzzer's job in `scripts/fuzz.sh`; this finds what a short blind run can.

/// xorshift64*: small, fast, and the same sequence for the same seed on every machine, so
/// a finding can be replayed with `--seed`.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Numbers that sit on the edges parsers get wrong.
const BOUNDARY_NUMBERS: &[&[u8]] = &[
    b"0",
    b"-1",
    b"1",
    b"255",
    b"256",
    b"65535",
    b"65536",
    b"2147483647",
    b"2147483648",
    b"4294967295",
    b"4294967296",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551615",
    b"18446744073709551616",
    b"1e20",
    b"-0",
    b"NaN",
    b"inf",
    b"0x7fffffffffffffff",
];

const BOUNDARY_BYTES: &[u8] = &[0, 0x7f, 0x80, 0xff, b'\n', b'\r', b'\t', b' ', 0x1b, b'"', b'\\'];

/// What a mutation may draw on besides the input itself.
pub struct MutationContext<'a> {
    /// Tokens of the target's grammar (`;`, `//`, `key=`, `REC->`, …).
    pub dictionary: &'a [&'a [u8]],
    /// Other seeds, for splicing.
    pub seeds: &'a [Vec<u8>],
    /// Longest input to produce.
    pub max_len: usize,
}

/// Apply one to eight random edits to `data`.
pub fn mutate(data: &mut Vec<u8>, rng: &mut Rng, context: &MutationContext<'_>) {
    let edits = 1 + rng.below(8);
    for _ in 0..edits {
        edit_once(data, rng, context);
    }
    data.truncate(context.max_len);
}

fn edit_once(data: &mut Vec<u8>, rng: &mut Rng, context: &MutationContext<'_>) {
    let at = |rng: &mut Rng, data: &Vec<u8>| rng.below(data.len() + 1);
    match rng.below(11) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = rng.next_u64() as u8;
        }
        2 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = BOUNDARY_BYTES[rng.below(BOUNDARY_BYTES.len())];
        }
        3 => {
            let i = at(rng, data);
            let n = 1 + rng.below(16);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            data.splice(i..i, bytes);
        }
        4 if !data.is_empty() => {
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(32)).min(data.len());
            data.drain(start..end);
        }
        5 if !data.is_empty() => {
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(64)).min(data.len());
            let chunk = data[start..end].to_vec();
            let i = at(rng, data);
            data.splice(i..i, chunk);
        }
        6 if !context.dictionary.is_empty() => {
            let token = context.dictionary[rng.below(context.dictionary.len())];
            let i = at(rng, data);
            data.splice(i..i, token.iter().copied());
        }
        7 => replace_number(data, rng),
        8 if !context.seeds.is_empty() => {
            let other = &context.seeds[rng.below(context.seeds.len())];
            if !other.is_empty() {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(256)).min(other.len());
                let i = at(rng, data);
                data.splice(i..i, other[start..end].iter().copied());
            }
        }
        // Rarely, a long repeat: widths, carets and limits break past 64 KiB.
        9 if rng.chance(16) && !data.is_empty() => {
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(8)).min(data.len());
            let chunk = data[start..end].to_vec();
            let times = (context.max_len.saturating_sub(data.len()) / chunk.len()).min(1 + rng.below(70_000));
            let i = at(rng, data);
            data.splice(i..i, chunk.iter().copied().cycle().take(chunk.len() * times));
        }
        _ if !data.is_empty() => {
            // Truncate: most decoders meet a short read at some point.
            let keep = rng.below(data.len());
            data.truncate(keep);
        }
        _ => data.push(rng.next_u64() as u8),
    }
}

/// Replace the run of ASCII digits at a random place with a boundary number (or insert one).
fn replace_number(data: &mut Vec<u8>, rng: &mut Rng) {
    let number = BOUNDARY_NUMBERS[rng.below(BOUNDARY_NUMBERS.len())];
    let digits: Vec<usize> = (0..data.len()).filter(|&i| data[i].is_ascii_digit()).collect();
    if digits.is_empty() {
        let i = rng.below(data.len() + 1);
        data.splice(i..i, number.iter().copied());
        return;
    }
    let start = digits[rng.below(digits.len())];
    let end = (start..data.len())
        .find(|&i| !data[i].is_ascii_digit())
        .unwrap_or(data.len());
    data.splice(start..end, number.iter().copied());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_mutations() {
        let context = MutationContext {
            dictionary: &[b"key="],
            seeds: &[b"a;b 1".to_vec()],
            max_len: 4096,
        };
        let run = |seed| {
            let mut rng = Rng::new(seed);
            let mut data = b"sched:sched_switch//key=pid/".to_vec();
            for _ in 0..100 {
                mutate(&mut data, &mut rng, &context);
            }
            data
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn mutations_respect_the_length_limit() {
        let context = MutationContext {
            dictionary: &[b"x"],
            seeds: &[],
            max_len: 100,
        };
        let mut rng = Rng::new(3);
        let mut data = b"12345".to_vec();
        for _ in 0..10_000 {
            mutate(&mut data, &mut rng, &context);
            assert!(data.len() <= 100);
        }
    }

    #[test]
    fn a_number_is_replaced_by_a_boundary_number() {
        let mut rng = Rng::new(11);
        let mut data = b"a;b 42".to_vec();
        replace_number(&mut data, &mut rng);
        let text = String::from_utf8(data).unwrap();
        assert!(text.starts_with("a;b "), "{text}");
        assert!(
            BOUNDARY_NUMBERS
                .iter()
                .any(|n| text.ends_with(std::str::from_utf8(n).unwrap()))
        );
    }
}
