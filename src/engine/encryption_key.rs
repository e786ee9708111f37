//! An AES-256-GCM key held by a pipeline: zeroed when dropped, never printed.

use crate::error::{Error, Result};
use aes_gcm::{Aes256Gcm, KeyInit};
use zeroize::Zeroizing;

/// A 32-byte AES-256-GCM key and its expanded cipher. `Debug` never shows the key; the key
/// bytes and the key schedule are zeroed on drop.
#[derive(Clone)]
pub struct EncryptionKey {
    key: Zeroizing<[u8; 32]>,
    cipher: Aes256Gcm,
}

impl EncryptionKey {
    /// A key from exactly 32 bytes (TileDB's AES_256_GCM key length).
    pub fn new(bytes: &[u8]) -> Result<EncryptionKey> {
        let key: [u8; 32] = bytes.try_into().map_err(|_| {
            Error::invalid(format!(
                "AES-256-GCM keys are 32 bytes, got {}",
                bytes.len()
            ))
        })?;
        let key = Zeroizing::new(key);
        let cipher = Aes256Gcm::new_from_slice(&key[..])
            .map_err(|_| Error::Internal("AES-256-GCM rejected a 32-byte key".into()))?;
        Ok(EncryptionKey { key, cipher })
    }

    /// The expanded cipher.
    pub fn cipher(&self) -> &Aes256Gcm {
        &self.cipher
    }
}

impl PartialEq for EncryptionKey {
    fn eq(&self, other: &Self) -> bool {
        self.key[..] == other.key[..]
    }
}

impl std::fmt::Debug for EncryptionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncryptionKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_32_byte_keys_and_never_printed() {
        assert!(EncryptionKey::new(&[0u8; 16]).is_err());
        assert!(EncryptionKey::new(&[0u8; 33]).is_err());
        let k = EncryptionKey::new(&[0x41u8; 32]).unwrap();
        let shown = format!("{k:?}");
        assert!(!shown.contains("41") && !shown.contains("65") && shown.contains("redacted"));
        assert_eq!(k, EncryptionKey::new(&[0x41u8; 32]).unwrap());
    }
}
