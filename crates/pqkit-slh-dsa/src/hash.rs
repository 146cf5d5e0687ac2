//! The tweakable hashes F, H, T_l, PRF and the message hashes H_msg, PRF_msg of one key (FIPS
//! 205 §11.1 SHAKE, §11.2 SHA2), on pqkit's multi-buffer engine (`pqkit-hash`): every call
//! site hashes a batch of same-length messages, or runs a batch of WOTS+ chains.

use hmac::{Hmac, Mac};
use pqkit_hash::Wiped;
use pqkit_hash::{Chain, Layout, ManyHash, Prelude, Sha256Prefix, Sha512Prefix, Shake};
use sha2::{Digest, Sha256, Sha512};
use sha3::Shake256;
use sha3::digest::{ExtendableOutput, Update, XofReader};

use crate::address::{Adrs, Type};
use crate::params::{Family, Params};

/// Which tweakable hash: the SHA2 sets hash F and PRF with SHA-256 and, in categories 3 and
/// 5, H and T_l with SHA-512.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// F and PRF: an n-byte input.
    Short,
    /// H and T_l: 2n or l·n bytes.
    Long,
}

static SHAKE256: Shake = Shake::SHAKE256;

/// The hashes of one key: PK.seed and, for SHA2, the midstates of PK.seed ‖ toByte(0, 64 − n)
/// and PK.seed ‖ toByte(0, 128 − n).
pub(crate) struct Hasher {
    pub(crate) p: &'static Params,
    pk_seed: [u8; 32],
    sha256: Sha256Prefix,
    sha512: Option<Sha512Prefix>,
}

impl Hasher {
    /// The hashes keyed by `pk_seed` (n bytes).
    pub(crate) fn new(p: &'static Params, pk_seed: &[u8]) -> Self {
        let mut seed = [0u8; 32];
        seed[..p.n].copy_from_slice(pk_seed);
        let (sha256, sha512) = match p.family {
            Family::Shake => (Sha256Prefix::NONE, None),
            Family::Sha2 => {
                let mut block = [0u8; 128];
                block[..p.n].copy_from_slice(pk_seed);
                let sha512 = p.sha512().then(|| Sha512Prefix::new(&block));
                (Sha256Prefix::new(&block[..64]), sha512)
            }
        };
        Self {
            p,
            pk_seed: seed,
            sha256,
            sha512,
        }
    }

    /// Bytes before the input in each message: ADRSc (22) for SHA2, PK.seed ‖ ADRS (n + 32)
    /// for SHAKE.
    pub(crate) fn header_len(&self) -> usize {
        match self.p.family {
            Family::Sha2 => 22,
            Family::Shake => self.p.n + 32,
        }
    }

    /// Writes the message header for `adrs` into `out` (`header_len()` bytes).
    pub(crate) fn header(&self, adrs: &Adrs, out: &mut [u8]) {
        match self.p.family {
            Family::Sha2 => adrs.compressed(out),
            Family::Shake => {
                let n = self.p.n;
                pqkit_hash::copy(&mut out[..n], &self.pk_seed[..n]);
                out[n..n + 32].copy_from_slice(&adrs.0);
            }
        }
    }

    fn engine(&self, kind: Kind) -> &dyn ManyHash {
        match (self.p.family, kind, &self.sha512) {
            (Family::Shake, ..) => &SHAKE256,
            (Family::Sha2, Kind::Long, Some(sha512)) => sha512,
            (Family::Sha2, ..) => &self.sha256,
        }
    }

    /// An empty batch of messages with `input_len`-byte inputs.
    pub(crate) fn batch(&self, input_len: usize, capacity: usize) -> Batch {
        let msg_len = self.header_len() + input_len;
        Batch {
            msg_len,
            header: self.header_len(),
            buf: Wiped::with_capacity(capacity * msg_len),
        }
    }

    /// Hashes every message of the batch: n bytes each, end to end.
    pub(crate) fn hash(&self, kind: Kind, batch: &Batch) -> Wiped<u8> {
        let n = self.p.n;
        let mut out = Wiped::filled(0u8, batch.len() * n);
        self.engine(kind)
            .hash_many(batch.msg_len, &batch.buf, n, &mut out);
        out
    }

    /// One tweakable hash of the concatenated `input` parts under `adrs`.
    pub(crate) fn one(&self, kind: Kind, adrs: &Adrs, input: &[&[u8]]) -> Wiped<u8> {
        let mut batch = self.batch(input.iter().map(|i| i.len()).sum(), 1);
        batch.push(self, adrs, |out| {
            let mut at = 0;
            for part in input {
                pqkit_hash::copy(&mut out[at..at + part.len()], part);
                at += part.len();
            }
        });
        self.hash(kind, &batch)
    }

    /// Runs the WOTS+ chains (Algorithm 5): step j of chain `c` is F under `adrs(c)` with its
    /// hash address set to j — each chain's message formed once, straight into the engine's
    /// blocks; the engine writes j and the value into it at each step.
    pub(crate) fn chains(&self, chains: &mut [Chain], adrs: impl Fn(&Chain) -> Adrs) {
        let header = self.header_len();
        pqkit_hash::fixed_chains_with(
            self.engine(Kind::Short),
            &self.chain_layout(),
            chains,
            &|_, c, m| self.header(&adrs(c), &mut m[..header]),
        );
    }

    /// [`Hasher::chains`] from secret values: each chain (its value SK.seed) first becomes
    /// PRF(PK.seed, SK.seed, skADRS) where skADRS is its address `adrs(c)` (of type `step`)
    /// with the type `prf` and the hash address (tree index) its `at` — the message of its
    /// first F but for the type byte, so the engine runs it as the chain's [`Prelude`] (in the
    /// chain kernel itself on AVX-512). WOTS+: `step` WOTS_HASH, `prf` WOTS_PRF, from step 0
    /// (Algorithm 6, lines 1–5; Algorithm 7, lines 9–10); FORS leaves: FORS_TREE and
    /// FORS_PRF, one step at the leaf's tree index (Algorithm 14; Algorithm 15, z = 0).
    pub(crate) fn chains_from_prf(
        &self,
        chains: &mut [Chain],
        (step, prf): (Type, Type),
        adrs: impl Fn(&Chain) -> Adrs,
    ) {
        let header = self.header_len();
        // The type's last byte: ADRSc[9] (SHA2), or ADRS[19] after PK.seed (SHAKE).
        let at = match self.p.family {
            Family::Sha2 => 9,
            Family::Shake => self.p.n + 19,
        };
        let prelude = Prelude {
            at,
            xor: prf as u8 ^ step as u8,
        };
        pqkit_hash::fixed_chains_with_prelude(
            self.engine(Kind::Short),
            &self.chain_layout(),
            prelude,
            chains,
            &|_, c, m| self.header(&adrs(c), &mut m[..header]),
        );
    }

    /// A chain step's F: the header, then the n-byte value, with the hash address (the last
    /// word of ADRSc for SHA2, of ADRS after PK.seed for SHAKE) as the step counter.
    fn chain_layout(&self) -> Layout {
        let (n, header) = (self.p.n, self.header_len());
        Layout {
            msg_len: header + n,
            step_at: header - 4,
            step_bytes: 4,
            value_at: header,
            n,
        }
    }

    /// PRF(PK.seed, SK.seed, ADRS) for the `count` addresses `adrs(k)` (the WOTS+ and FORS
    /// secret values, FIPS 205 §11.1, §11.2): n bytes each, end to end, hashed in lanes.
    pub(crate) fn prf_many(
        &self,
        sk_seed: &[u8],
        count: u32,
        adrs: impl Fn(u32) -> Adrs,
    ) -> Wiped<u8> {
        let mut batch = self.batch(self.p.n, count as usize);
        for k in 0..count {
            batch.push(self, &adrs(k), |out| pqkit_hash::copy(out, sk_seed));
        }
        self.hash(Kind::Short, &batch)
    }

    /// PRF_msg(SK.prf, opt_rand, M): n bytes (§11.1; §11.2.1 HMAC-SHA-256; §11.2.2
    /// HMAC-SHA-512).
    pub(crate) fn prf_msg(&self, sk_prf: &[u8], opt_rand: &[u8], m: &[&[u8]]) -> Vec<u8> {
        let n = self.p.n;
        let mut out = match (self.p.family, self.p.sha512()) {
            (Family::Shake, _) => {
                let mut x = Shake256::default();
                x.update(sk_prf);
                x.update(opt_rand);
                m.iter().for_each(|part| x.update(part));
                let mut out = vec![0u8; n];
                x.finalize_xof().read(&mut out);
                out
            }
            (Family::Sha2, false) => hmac::<Hmac<Sha256>>(sk_prf, opt_rand, m),
            (Family::Sha2, true) => hmac::<Hmac<Sha512>>(sk_prf, opt_rand, m),
        };
        out.truncate(n);
        out
    }

    /// H_msg(R, PK.seed, PK.root, M): m bytes (§11.1; §11.2.1 MGF1-SHA-256; §11.2.2
    /// MGF1-SHA-512).
    pub(crate) fn h_msg(&self, r: &[u8], pk_root: &[u8], m: &[&[u8]]) -> Vec<u8> {
        let pk_seed = &self.pk_seed[..self.p.n];
        match (self.p.family, self.p.sha512()) {
            (Family::Shake, _) => {
                let mut x = Shake256::default();
                for part in [r, pk_seed, pk_root].iter().chain(m) {
                    x.update(part);
                }
                let mut out = vec![0u8; self.p.m];
                x.finalize_xof().read(&mut out);
                out
            }
            (Family::Sha2, false) => mgf1::<Sha256>(r, pk_seed, pk_root, m, self.p.m),
            (Family::Sha2, true) => mgf1::<Sha512>(r, pk_seed, pk_root, m, self.p.m),
        }
    }
}

fn hmac<M: Mac + hmac::digest::KeyInit>(key: &[u8], opt_rand: &[u8], m: &[&[u8]]) -> Vec<u8> {
    let mut mac = <M as hmac::digest::KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(opt_rand);
    m.iter().for_each(|part| mac.update(part));
    mac.finalize().into_bytes().to_vec()
}

/// MGF1-Hash(R ‖ PK.seed ‖ Hash(R ‖ PK.seed ‖ PK.root ‖ M), len) (RFC 8017 B.2.1).
fn mgf1<D: Digest>(r: &[u8], pk_seed: &[u8], pk_root: &[u8], m: &[&[u8]], len: usize) -> Vec<u8> {
    let mut inner = D::new();
    for part in [r, pk_seed, pk_root].iter().chain(m) {
        Digest::update(&mut inner, part);
    }
    let inner = inner.finalize();
    let mut out = Vec::with_capacity(len + 64);
    let mut counter = 0u32;
    while out.len() < len {
        let mut d = D::new();
        Digest::update(&mut d, r);
        Digest::update(&mut d, pk_seed);
        Digest::update(&mut d, &inner);
        Digest::update(&mut d, counter.to_be_bytes());
        out.extend_from_slice(&d.finalize());
        counter += 1;
    }
    out.truncate(len);
    out
}

/// Same-length messages (header ‖ input) laid end to end; zeroized on drop (inputs may be
/// secret: SK.seed, WOTS+ and FORS secret values).
pub(crate) struct Batch {
    msg_len: usize,
    header: usize,
    buf: Wiped<u8>,
}

impl Batch {
    /// Appends header(`adrs`) ‖ input, the input written by `input`.
    pub(crate) fn push(&mut self, h: &Hasher, adrs: &Adrs, input: impl FnOnce(&mut [u8])) {
        let at = self.buf.len();
        self.buf.resize(at + self.msg_len, 0);
        let msg = &mut self.buf[at..];
        h.header(adrs, &mut msg[..self.header]);
        input(&mut msg[self.header..]);
    }

    /// Messages in the batch.
    pub(crate) fn len(&self) -> usize {
        self.buf.len() / self.msg_len
    }
}
