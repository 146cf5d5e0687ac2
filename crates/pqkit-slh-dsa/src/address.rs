//! The 32-byte hash address ADRS and its 22-byte compressed form ADRSc (FIPS 205 §4.2, §4.3,
//! §11.2).

/// Address types (FIPS 205 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Type {
    WotsHash = 0,
    WotsPk = 1,
    Tree = 2,
    ForsTree = 3,
    ForsRoots = 4,
    WotsPrf = 5,
    ForsPrf = 6,
}

/// ADRS: layer (4 bytes) ‖ tree (12) ‖ type (4) ‖ three words (key pair, chain or tree height,
/// hash or tree index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Adrs(pub(crate) [u8; 32]);

impl Adrs {
    fn set_word(&mut self, at: usize, v: u32) {
        self.0[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn set_layer(&mut self, layer: u32) {
        self.set_word(0, layer);
    }

    /// The tree address: 12 bytes, of which the top 4 are zero here (idx_tree < 2^64).
    pub(crate) fn set_tree(&mut self, tree: u64) {
        self.0[4..8].fill(0);
        self.0[8..16].copy_from_slice(&tree.to_be_bytes());
    }

    /// setTypeAndClear: the type, and the three words after it zeroed.
    pub(crate) fn set_type(&mut self, t: Type) {
        self.set_word(16, t as u32);
        self.0[20..].fill(0);
    }

    pub(crate) fn set_key_pair(&mut self, kp: u32) {
        self.set_word(20, kp);
    }

    pub(crate) fn set_chain(&mut self, i: u32) {
        self.set_word(24, i);
    }

    pub(crate) fn set_tree_height(&mut self, z: u32) {
        self.set_word(24, z);
    }

    pub(crate) fn set_tree_index(&mut self, i: u32) {
        self.set_word(28, i);
    }

    /// ADRSc = ADRS\[3\] ‖ ADRS\[8:16\] ‖ ADRS\[19\] ‖ ADRS\[20:32\] (FIPS 205 §11.2).
    pub(crate) fn compressed(&self, out: &mut [u8]) {
        out[0] = self.0[3];
        out[1..9].copy_from_slice(&self.0[8..16]);
        out[9] = self.0[19];
        out[10..22].copy_from_slice(&self.0[20..32]);
    }
}
