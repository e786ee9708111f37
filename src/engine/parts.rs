//! The parts model of docs/FORMAT.md §4.6: a stream (metadata or data) is an ordered list of
//! byte strings ("parts"). Compressors, checksums and encryption treat each part separately,
//! so part boundaries decide the output bytes.

use crate::mem::{self, OutBuf};

/// A borrowed list of parts: their bytes, concatenated, and the length of each part.
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    bytes: &'a [u8],
    lens: &'a [usize],
}

impl<'a> Parts<'a> {
    /// The empty list (zero parts).
    pub const EMPTY: Parts<'static> = Parts {
        bytes: &[],
        lens: &[],
    };

    /// A list over `bytes` cut at `lens` (which must sum to `bytes.len()`).
    pub fn new(bytes: &'a [u8], lens: &'a [usize]) -> Parts<'a> {
        debug_assert_eq!(lens.iter().sum::<usize>(), bytes.len());
        Parts { bytes, lens }
    }

    /// Number of parts.
    pub fn count(&self) -> usize {
        self.lens.len()
    }

    /// Total bytes over all parts.
    pub fn total_len(&self) -> usize {
        self.bytes.len()
    }

    /// All bytes, concatenated.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The length of each part.
    pub fn lens(&self) -> &'a [usize] {
        self.lens
    }

    /// Iterates over the parts.
    pub fn iter(&self) -> PartsIter<'a> {
        PartsIter {
            bytes: self.bytes,
            lens: self.lens.iter(),
        }
    }

    /// TileDB's pass-through of a list ("append view"): an all-empty list becomes zero parts;
    /// otherwise leading and trailing empty parts are dropped and interior ones kept.
    pub fn forwarded(&self) -> Parts<'a> {
        if self.bytes.is_empty() {
            return Parts::EMPTY;
        }
        let first = self.lens.iter().position(|&l| l != 0).unwrap_or(0);
        let last = self.lens.iter().rposition(|&l| l != 0).unwrap_or(0);
        Parts {
            bytes: self.bytes,
            lens: &self.lens[first..=last],
        }
    }
}

/// Iterator over the parts of a [`Parts`].
pub struct PartsIter<'a> {
    bytes: &'a [u8],
    lens: std::slice::Iter<'a, usize>,
}

impl<'a> Iterator for PartsIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let len = *self.lens.next()?;
        let (part, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Some(part)
    }
}

/// An owned, reusable list of parts (cleared, not freed, between chunks). Its byte buffer
/// never shrinks, so steady-state writes neither allocate nor zero memory.
#[derive(Clone, Debug, Default)]
pub struct PartList {
    /// Initialized storage; only `bytes[base..len]` belongs to the list.
    bytes: Vec<u8>,
    /// Where the list starts in `bytes` (0 unless the list is [`attach`](Self::attach)ed
    /// behind bytes it does not own).
    base: usize,
    len: usize,
    lens: Vec<usize>,
}

impl PartList {
    /// Removes every part, keeping the allocation.
    pub fn clear(&mut self) {
        self.len = self.base;
        self.lens.clear();
    }

    /// Makes `buf` the storage of this (emptied) list, the parts to be appended after its
    /// first `base` bytes, which are kept; returns the previous storage. A driver lends an
    /// output buffer this way so that a stage writes its data straight into it.
    pub fn attach(&mut self, mut buf: Vec<u8>, base: usize) -> Vec<u8> {
        buf.truncate(base);
        debug_assert_eq!(
            buf.len(),
            base,
            "the buffer holds the bytes before the list"
        );
        self.lens.clear();
        self.base = base;
        self.len = base;
        std::mem::replace(&mut self.bytes, buf)
    }

    /// Reverses [`attach`](Self::attach): puts `previous` back as the (empty) list's storage
    /// and returns the lent buffer, ending at the list's last byte.
    pub fn detach(&mut self, previous: Vec<u8>) -> Vec<u8> {
        let mut buf = std::mem::replace(&mut self.bytes, previous);
        buf.truncate(self.len);
        self.base = 0;
        self.len = 0;
        self.lens.clear();
        buf
    }

    /// Appends one part holding a copy of `bytes`.
    pub fn push(&mut self, bytes: &[u8]) {
        self.push_uninit(bytes.len()).copy_from_slice(bytes);
    }

    /// Appends one part written by `write`, which appends to the given vector.
    pub fn push_with<E>(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        self.bytes.truncate(self.len);
        let start = self.len;
        let result = write(&mut self.bytes);
        if result.is_err() {
            self.bytes.truncate(start);
            return result;
        }
        self.len = self.bytes.len();
        self.lens.push(self.len - start);
        Ok(())
    }

    /// Appends one part of `len` bytes and returns it for writing (its old contents are
    /// unspecified: every byte must be written).
    pub fn push_uninit(&mut self, len: usize) -> &mut [u8] {
        let start = self.len;
        if self.bytes.len() < start + len {
            self.bytes.resize(start + len, 0);
        }
        self.len = start + len;
        self.lens.push(len);
        &mut self.bytes[start..start + len]
    }

    /// Appends one part of `len` bytes written by `write` through an [`OutBuf`] (the storage
    /// is not zero-filled first). `write` must write all `len` bytes: returning `Ok` with
    /// fewer is [`Unfilled`](crate::mem::Unfilled). On error nothing is appended.
    pub fn push_filled<E: From<crate::mem::Unfilled>>(
        &mut self,
        len: usize,
        write: impl FnOnce(&mut OutBuf<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let start = self.len;
        mem::fill_range(&mut self.bytes, start, len, write)?;
        self.len = start + len;
        self.lens.push(len);
        Ok(())
    }

    /// Appends the parts of `parts` as TileDB forwards a list (see [`Parts::forwarded`]).
    pub fn extend_forwarded(&mut self, parts: Parts<'_>) {
        let fwd = parts.forwarded();
        for part in fwd.iter() {
            self.push(part);
        }
    }

    /// A borrowed view of the list.
    pub fn as_parts(&self) -> Parts<'_> {
        Parts {
            bytes: &self.bytes[self.base..self.len],
            lens: &self.lens,
        }
    }
}

/// A reusable byte buffer with a logical length; it never shrinks, so steady-state use
/// neither allocates nor zeroes memory.
#[derive(Clone, Debug, Default)]
pub struct ScratchBuf {
    bytes: Vec<u8>,
    len: usize,
}

impl ScratchBuf {
    /// Sets the length to `len` and returns the buffer (old contents unspecified).
    pub fn alloc(&mut self, len: usize) -> &mut [u8] {
        if self.bytes.len() < len {
            self.bytes.resize(len, 0);
        }
        self.len = len;
        &mut self.bytes[..len]
    }

    /// The current contents.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarding_follows_tiledb_append_view() {
        let lens = [0usize];
        assert_eq!(Parts::new(&[], &lens).forwarded().count(), 0);
        let bytes = [1u8, 2, 3];
        let lens = [0usize, 2, 0, 1, 0];
        let f = Parts::new(&bytes, &lens).forwarded();
        assert_eq!(f.lens(), &[2, 0, 1]);
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            vec![&[1u8, 2][..], &[][..], &[3u8][..]]
        );
    }

    #[test]
    fn part_list_push_and_clear() {
        let mut l = PartList::default();
        l.push(b"ab");
        l.push_with::<()>(|v| {
            v.extend_from_slice(b"cde");
            Ok(())
        })
        .unwrap();
        assert!(
            l.push_with(|v| {
                v.push(9);
                Err(())
            })
            .is_err()
        );
        l.push_uninit(2).copy_from_slice(b"fg");
        assert_eq!(l.as_parts().lens(), &[2, 3, 2]);
        assert_eq!(l.as_parts().bytes(), b"abcdefg");
        l.clear();
        assert_eq!(l.as_parts().count(), 0);
    }

    #[test]
    fn push_filled_appends_only_complete_parts() {
        use crate::error::Error;
        let mut l = PartList::default();
        l.push(b"ab");
        l.push_filled::<Error>(3, |o| {
            o.put(b"cd");
            o.put_byte(b'e');
            Ok(())
        })
        .unwrap();
        // A writer that fails, or succeeds with bytes unwritten, appends nothing.
        let failed = l.push_filled(4, |o| {
            o.put(b"xyz");
            Err(Error::invalid("stop"))
        });
        assert!(matches!(failed, Err(Error::InvalidArgument(_))));
        let short = l.push_filled::<Error>(4, |o| {
            o.put(b"xyz");
            Ok(())
        });
        assert!(matches!(short, Err(Error::Internal(m)) if m.contains("3 of its 4 bytes")));
        assert_eq!(l.as_parts().lens(), &[2, 3]);
        assert_eq!(l.as_parts().bytes(), b"abcde");
        // Storage kept from before (initialised) and past its end (not) both work.
        l.clear();
        l.push_filled::<Error>(8, |o| {
            o.put(b"01234567");
            Ok(())
        })
        .unwrap();
        assert_eq!(l.as_parts().bytes(), b"01234567");
    }
}
