//! Writing outputs into memory that is not initialised yet, without zero-filling it first and
//! without ever forming a `&mut [u8]` over uninitialised bytes.
//!
//! Outputs that are about to be overwritten entirely (an unfiltered tile, a shuffled part)
//! used to be zero-filled by `Vec::resize` first: a full extra pass over memory that perf
//! attributed 3–4% of the shuffle rows to. Instead, writers get an [`OutBuf`]: a write-only
//! cursor over `[MaybeUninit<u8>]` that counts the bytes written from its start. Its safe
//! methods append initialised bytes ([`put`](OutBuf::put), [`fill`](OutBuf::fill),
//! [`put_array`](OutBuf::put_array), [`put_arrays`](OutBuf::put_arrays)), hand out
//! sub-windows that must be written completely ([`sub`](OutBuf::sub),
//! [`split`](OutBuf::split)), and read back only what was written
//! ([`written`](OutBuf::written)). [`fill_range`] makes a vector's range part of the vector
//! only when its writer wrote every byte, so no uninitialised byte is ever inside a `Vec<u8>`.
//!
//! Writers that cannot append in order get raw access only through `unsafe` crate-internal
//! methods ([`OutBuf::spare_mut`], [`OutBuf::assume_written`]), used by the SIMD kernels and
//! the C codec adapters ([`super::codec_out`]); code that denies `unsafe` cannot reach them.
//!
//! In debug builds and in this crate's unit tests (release too) the uninitialised bytes are
//! first filled with a poison pattern, so that a kernel skipping bytes shows up as wrong
//! output in the byte-for-byte tests.

use std::fmt;
use std::mem::MaybeUninit;

/// The byte debug builds and unit tests fill uninitialised ranges with before handing them
/// out, and [`OutBuf::init_with`] initialises its windows with (zero in release builds).
const POISON: u8 = if cfg!(any(debug_assertions, test)) {
    0xA5
} else {
    0
};

/// A writer reported success but wrote only `written` of the `len` bytes it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unfilled {
    /// Bytes written from the start of the window.
    pub written: usize,
    /// The window's length.
    pub len: usize,
}

impl fmt::Display for Unfilled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a writer reported success after writing {} of its {} bytes",
            self.written, self.len
        )
    }
}

impl std::error::Error for Unfilled {}

impl From<Unfilled> for crate::error::Error {
    fn from(e: Unfilled) -> Self {
        crate::error::Error::Internal(e.to_string())
    }
}

/// A write-only cursor over a window of possibly uninitialised bytes.
///
/// The bytes from the start up to [`filled`](Self::filled) have been written (they are
/// initialised); writes append after them. Writing past the end panics, like
/// `copy_from_slice` with mismatched lengths. Nothing can read a byte that was not written.
pub struct OutBuf<'a> {
    /// The window; `buf[..filled]` is initialised (invariant), the rest may not be.
    buf: &'a mut [MaybeUninit<u8>],
    filled: usize,
    /// A child made by [`rest`](Self::rest) adds its `filled` here when dropped, advancing its
    /// parent over the bytes it wrote (which directly follow the parent's written ones).
    parent: Option<&'a mut usize>,
}

impl Drop for OutBuf<'_> {
    fn drop(&mut self) {
        if let Some(parent) = self.parent.take() {
            *parent += self.filled;
        }
    }
}

impl fmt::Debug for OutBuf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutBuf")
            .field("len", &self.buf.len())
            .field("filled", &self.filled)
            .finish()
    }
}

impl<'a> OutBuf<'a> {
    /// A cursor over uninitialised memory, nothing written yet.
    pub fn from_uninit(buf: &'a mut [MaybeUninit<u8>]) -> OutBuf<'a> {
        OutBuf {
            buf,
            filled: 0,
            parent: None,
        }
    }

    /// A cursor over initialised bytes (their old contents count as not written).
    pub fn from_init(buf: &'a mut [u8]) -> OutBuf<'a> {
        // SAFETY: the bytes stay initialised: `OutBuf` writes only initialised values into its
        // window (its safe methods copy `u8`s; `spare_mut`'s contract demands the same), so
        // the caller's `[u8]` never sees an uninitialised byte.
        OutBuf::from_uninit(unsafe { as_uninit_mut(buf) })
    }

    /// Lets `write` write all of the initialised slice `buf` through a cursor: the adapter from
    /// a `&mut [u8]` API to a writer taking an [`OutBuf`]. Returning `Ok` with bytes unwritten
    /// is [`Unfilled`].
    pub fn over<R, E: From<Unfilled>>(
        buf: &mut [u8],
        write: impl FnOnce(&mut OutBuf<'_>) -> Result<R, E>,
    ) -> Result<R, E> {
        let len = buf.len();
        OutBuf::from_init(buf).sub(len, write)
    }

    /// The window's length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether the window has no bytes at all.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Bytes written so far, from the start of the window.
    #[inline]
    pub fn filled(&self) -> usize {
        self.filled
    }

    /// Bytes still to write.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.filled
    }

    /// Whether every byte of the window has been written.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.filled == self.buf.len()
    }

    /// The bytes written so far.
    #[inline]
    pub fn written(&self) -> &[u8] {
        // SAFETY: `buf[..filled]` is initialised (the type's invariant); `MaybeUninit<u8>`
        // has the layout of `u8`.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast(), self.filled) }
    }

    /// The bytes written so far, to modify in place (decryption, for example).
    #[inline]
    pub fn written_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `written`; the exclusive borrow of `self` covers the returned slice.
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast(), self.filled) }
    }

    /// Appends a copy of `src`.
    ///
    /// # Panics
    ///
    /// If `src` is longer than [`remaining`](Self::remaining).
    #[inline(always)]
    pub fn put(&mut self, src: &[u8]) {
        let dst = &mut self.buf[self.filled..][..src.len()];
        write_slice(dst, src);
        self.filled += src.len();
    }

    /// Appends one byte.
    ///
    /// # Panics
    ///
    /// If the window is full.
    #[inline(always)]
    pub fn put_byte(&mut self, b: u8) {
        self.buf[self.filled].write(b);
        self.filled += 1;
    }

    /// Appends `n` copies of `b`.
    ///
    /// # Panics
    ///
    /// If `n` exceeds [`remaining`](Self::remaining).
    #[inline(always)]
    pub fn fill(&mut self, b: u8, n: usize) {
        let dst = &mut self.buf[self.filled..][..n];
        // SAFETY: `dst` is `n` writable bytes of the window; `write_bytes` initialises them.
        unsafe { dst.as_mut_ptr().write_bytes(b, n) };
        self.filled += n;
    }

    /// Appends the `N` bytes of `a`.
    ///
    /// # Panics
    ///
    /// If `N` exceeds [`remaining`](Self::remaining).
    #[inline(always)]
    pub fn put_array<const N: usize>(&mut self, a: [u8; N]) {
        let dst = &mut self.buf[self.filled..][..N];
        // SAFETY: `dst` is `N` writable bytes; the unaligned write of a `[u8; N]` initialises
        // exactly them.
        unsafe { dst.as_mut_ptr().cast::<[u8; N]>().write_unaligned(a) };
        self.filled += N;
    }

    /// Appends the `N` bytes of every item of `items`, in order (the loop of
    /// `for (d, v) in dst.chunks_exact_mut(N).zip(values)`, which the compiler vectorises).
    ///
    /// # Panics
    ///
    /// If the items hold more than [`remaining`](Self::remaining) bytes, or `N` is 0.
    #[inline(always)]
    pub fn put_arrays<const N: usize, I>(&mut self, items: I)
    where
        I: IntoIterator<Item = [u8; N]>,
        I::IntoIter: ExactSizeIterator,
    {
        let items = items.into_iter();
        let count = items.len();
        // Saturating: an impossible size fails the slicing below.
        let bytes = count.saturating_mul(N);
        let dst = &mut self.buf[self.filled..][..bytes];
        let mut written = 0;
        for (slot, a) in dst.chunks_exact_mut(N).zip(items) {
            // SAFETY: `slot` is `N` writable bytes; the write initialises exactly them.
            unsafe { slot.as_mut_ptr().cast::<[u8; N]>().write_unaligned(a) };
            written += N;
        }
        // Counted, not taken from `len()`: an `ExactSizeIterator` is a safe trait, and a buggy
        // one may yield fewer items than it announced.
        self.filled += written;
    }

    /// Lets `write` write the next `len` bytes through a cursor of their own; on `Ok` that
    /// cursor must be full, else the result is [`Unfilled`]. Whatever it wrote counts as
    /// written here too, on success or failure.
    ///
    /// # Panics
    ///
    /// If `len` exceeds [`remaining`](Self::remaining).
    #[inline]
    pub fn sub<R, E: From<Unfilled>>(
        &mut self,
        len: usize,
        write: impl FnOnce(&mut OutBuf<'_>) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut child = self.rest();
        child.buf = &mut std::mem::take(&mut child.buf)[..len];
        let span = child.span();
        let result = write(&mut child)?;
        // A replaced child reported what it wrote when it was dropped; the replacement has no
        // parent and counts for nothing.
        let written = child.written_over(span);
        drop(child);
        if written != len {
            return Err(Unfilled { written, len }.into());
        }
        Ok(result)
    }

    /// Lets `write` try to write the rest of the window: what it wrote counts as written here
    /// only if it returns `Ok` (on error the next writer starts where `write` started).
    pub fn attempt<R, E>(
        &mut self,
        write: impl FnOnce(&mut OutBuf<'_>) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut child = OutBuf::from_uninit(&mut self.buf[self.filled..]);
        let span = child.span();
        let result = write(&mut child)?;
        let written = child.written_over(span);
        drop(child);
        self.filled += written;
        Ok(result)
    }

    /// Where the window lies: its start and length.
    fn span(&self) -> (*const MaybeUninit<u8>, usize) {
        (self.buf.as_ptr(), self.buf.len())
    }

    /// The bytes written, if this cursor is still over `span`, else 0. A writer handed
    /// `&mut OutBuf` may replace the cursor with another one (over a leaked buffer, say):
    /// only a count over the expected window says anything about that window.
    fn written_over(&self, span: (*const MaybeUninit<u8>, usize)) -> usize {
        if self.span() == span { self.filled } else { 0 }
    }

    /// A cursor over the rest of the window (the bytes not yet written); what it writes
    /// counts as written here when it is dropped.
    #[inline]
    pub fn rest(&mut self) -> OutBuf<'_> {
        let OutBuf { buf, filled, .. } = self;
        OutBuf {
            buf: &mut buf[*filled..],
            filled: 0,
            parent: Some(filled),
        }
    }

    /// Cuts the rest of the window into consecutive windows of `lens` bytes and lets `write`
    /// write them (in any order, on any thread). Afterwards, this cursor advances over the
    /// leading windows that were written completely (and the written start of the first one
    /// that was not).
    ///
    /// # Panics
    ///
    /// If the lengths add up to more than [`remaining`](Self::remaining).
    pub fn split<R>(
        &mut self,
        lens: impl IntoIterator<Item = usize>,
        write: impl FnOnce(&mut [OutBuf<'_>]) -> R,
    ) -> R {
        let mut rest = &mut self.buf[self.filled..];
        let mut windows = Vec::new();
        for len in lens {
            let (w, r) = std::mem::take(&mut rest).split_at_mut(len);
            windows.push(OutBuf::from_uninit(w));
            rest = r;
        }
        let spans: Vec<_> = windows.iter().map(OutBuf::span).collect();
        let result = write(&mut windows);
        // `write` may have swapped or replaced windows: each counts only over its own span.
        let mut advance = 0;
        for (w, &(ptr, len)) in windows.iter().zip(&spans) {
            let written = w.written_over((ptr, len));
            advance += written;
            if written != len {
                break;
            }
        }
        drop(windows);
        self.filled += advance;
        result
    }

    /// Initialises the next `len` bytes (zero in release builds, a poison pattern in debug
    /// builds) and lets `write` write them as `&mut [u8]`; on `Ok` they count as written. For
    /// writers that need an initialised slice (C codecs behind a `&mut [u8]` API): the
    /// initialisation is an extra pass over the window, so the writer must write all of it.
    ///
    /// # Panics
    ///
    /// If `len` exceeds [`remaining`](Self::remaining).
    pub fn init_with<R, E>(
        &mut self,
        len: usize,
        write: impl FnOnce(&mut [u8]) -> Result<R, E>,
    ) -> Result<R, E> {
        let start = self.filled;
        let dst = &mut self.buf[start..][..len];
        // SAFETY: `dst` is `len` writable bytes; `write_bytes` initialises all of them, so the
        // `u8` slice formed over them next is over initialised memory.
        let init = unsafe {
            dst.as_mut_ptr().write_bytes(POISON, len);
            std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), len)
        };
        let result = write(init)?;
        self.filled = start + len;
        Ok(result)
    }

    /// The bytes not yet written, for a writer that cannot append in order (SIMD kernels, C
    /// codecs); report what it wrote with [`assume_written`](Self::assume_written).
    ///
    /// # Safety
    ///
    /// Only initialised values may be written into the slice: the window may be a `[u8]`
    /// lent by [`from_init`](Self::from_init) or [`fill_range`], which must stay initialised.
    #[inline]
    pub(crate) unsafe fn spare_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        &mut self.buf[self.filled..]
    }

    /// Advances over `n` bytes written through [`spare_mut`](Self::spare_mut).
    ///
    /// # Safety
    ///
    /// The first `n` bytes of [`spare_mut`](Self::spare_mut) have been written.
    ///
    /// # Panics
    ///
    /// If `n` exceeds [`remaining`](Self::remaining).
    #[inline]
    pub(crate) unsafe fn assume_written(&mut self, n: usize) {
        assert!(n <= self.remaining(), "assume_written past the window");
        self.filled += n;
    }
}

/// Writes `src` into `dst` (of the same length): `MaybeUninit::write_copy_of_slice`, which is
/// not stable at this crate's MSRV.
///
/// # Panics
///
/// If the lengths differ.
#[inline]
pub fn write_slice(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "write_slice lengths differ");
    // SAFETY: both slices hold `src.len()` bytes, `dst` is writable and, being an exclusive
    // borrow, does not overlap `src`; the copy initialises all of `dst`.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), src.len());
    }
}

/// Views initialised bytes as possibly uninitialised ones, for a writer that takes
/// `[MaybeUninit<u8>]` (the SIMD kernels).
///
/// # Safety
///
/// Only initialised values may be written through the result: `buf` must stay initialised.
#[inline]
pub(crate) unsafe fn as_uninit_mut(buf: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    let len = buf.len();
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`; the exclusive borrow moves into the
    // result. The caller keeps the bytes initialised (this function's contract).
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast(), len) }
}

/// Lets `fill` write `buf[start..start + len]` through an [`OutBuf`] (the bytes at and past
/// `buf.len()` are not initialised and are not zero-filled first; old contents of
/// initialised ones count as not written), and on success extends `buf` to at least
/// `start + len`; returns what `fill` returned. `fill` must write the whole window: if it
/// returns `Ok` with bytes unwritten, the result is [`Unfilled`]. On error `buf` keeps its
/// length, so no unwritten byte is ever part of it.
///
/// # Panics
///
/// If `start > buf.len()`, or `start + len` overflows.
pub fn fill_range<R, E: From<Unfilled>>(
    buf: &mut Vec<u8>,
    start: usize,
    len: usize,
    fill: impl FnOnce(&mut OutBuf<'_>) -> Result<R, E>,
) -> Result<R, E> {
    assert!(
        start <= buf.len(),
        "fill_range starts past the vector's end"
    );
    let end = start.checked_add(len).expect("fill_range end overflows");
    let old_len = buf.len();
    if end > old_len {
        buf.reserve(end - old_len);
        if cfg!(any(debug_assertions, test)) {
            for b in &mut buf.spare_capacity_mut()[..end - old_len] {
                b.write(POISON);
            }
        }
    }
    let result = {
        // SAFETY: `reserve` made the capacity at least `end`, so `start..end` lies inside the
        // allocation, and the exclusive borrow of `buf` (held until this block ends, before
        // `buf` is used again) makes the slice the only access to it. Viewing bytes as
        // `MaybeUninit<u8>` is always valid; those below `old_len` stay initialised because an
        // `OutBuf` writes only initialised values.
        let window = unsafe {
            std::slice::from_raw_parts_mut(
                buf.as_mut_ptr().add(start).cast::<MaybeUninit<u8>>(),
                len,
            )
        };
        let mut out = OutBuf::from_uninit(window);
        let span = out.span();
        let result = fill(&mut out)?;
        // Counted over the window itself: `fill` may have replaced the cursor.
        let written = out.written_over(span);
        if written != len {
            return Err(Unfilled { written, len }.into());
        }
        result
    };
    if end > old_len {
        // SAFETY: `end ≤ capacity`; the window's cursor is full, so every byte of
        // `start..end` was written; `0..start` was initialised before (`start ≤ old_len`).
        unsafe { buf.set_len(end) };
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_range_extends_only_when_every_byte_is_written() {
        let mut v = b"abc".to_vec();
        let r: Result<(), Unfilled> = fill_range(&mut v, 1, 4, |s| {
            s.put(b"WXYZ");
            Ok(())
        });
        assert!(r.is_ok());
        assert_eq!(v, b"aWXYZ");
        // A failing writer leaves the vector as it was.
        let r: Result<(), Unfilled> = fill_range(&mut v, 5, 1000, |s| {
            s.put_byte(1);
            Err(Unfilled { written: 0, len: 7 })
        });
        assert_eq!(r.unwrap_err().len, 7);
        assert_eq!(v, b"aWXYZ");
        // A writer that reports success without writing everything cannot finish.
        let r: Result<(), Unfilled> = fill_range(&mut v, 5, 10, |s| {
            s.put(b"123456789");
            Ok(())
        });
        assert_eq!(
            r,
            Err(Unfilled {
                written: 9,
                len: 10
            })
        );
        assert_eq!(v, b"aWXYZ");
        // Nor one that writes nothing, inside the initialised part.
        let r: Result<(), Unfilled> = fill_range(&mut v, 0, 2, |_| Ok(()));
        assert!(r.is_err());
        assert_eq!(v, b"aWXYZ");
        // Inside the initialised part the length stays.
        let r = fill_range::<_, Unfilled>(&mut v, 0, 2, |s| {
            s.put(b"01");
            Ok(7)
        });
        assert_eq!(r, Ok(7));
        assert_eq!(v, b"01XYZ");
        // From empty, and an empty range.
        let mut e = Vec::new();
        fill_range::<_, Unfilled>(&mut e, 0, 0, |s| {
            assert!(s.is_empty() && s.is_full());
            Ok(())
        })
        .unwrap();
        assert!(e.is_empty());
    }

    #[test]
    #[should_panic(expected = "starts past")]
    fn start_past_the_end_panics() {
        let mut v = vec![0u8; 2];
        let _ = fill_range::<_, Unfilled>(&mut v, 3, 1, |_| Ok(()));
    }

    #[test]
    fn writes_append_and_count() {
        let mut v = Vec::new();
        fill_range::<_, Unfilled>(&mut v, 0, 3 + 4 + 1 + 2 + 6 + 5, |o| {
            assert_eq!((o.len(), o.filled(), o.remaining()), (21, 0, 21));
            o.put(b"abc");
            o.fill(b'-', 4);
            o.put_byte(b'!');
            o.put_array(*b"xy");
            o.put_arrays((1u16..4).map(|x| x.to_be_bytes()));
            assert_eq!(o.written(), b"abc----!xy\0\x01\0\x02\0\x03");
            o.written_mut()[0] = b'A';
            o.put(b"tail!");
            assert!(o.is_full());
            Ok(())
        })
        .unwrap();
        assert_eq!(v, b"Abc----!xy\0\x01\0\x02\0\x03tail!");
    }

    #[test]
    #[should_panic]
    fn writing_past_the_end_panics() {
        let mut b = [0u8; 3];
        OutBuf::from_init(&mut b).put(b"abcd");
    }

    #[test]
    #[should_panic]
    fn put_arrays_past_the_end_panics() {
        let mut b = [0u8; 5];
        OutBuf::from_init(&mut b).put_arrays([[1u8, 2], [3, 4], [5, 6]]);
    }

    #[test]
    fn sub_windows_must_be_written_completely() {
        let mut b = [0u8; 8];
        let mut o = OutBuf::from_init(&mut b);
        o.put(b"h");
        let r = o.sub(3, |w| {
            assert_eq!(w.len(), 3);
            w.put(b"abc");
            Ok::<_, Unfilled>(5)
        });
        assert_eq!(r, Ok(5));
        assert_eq!(o.filled(), 4);
        // A sub-window left short is an error, though what it wrote counts.
        let r = o.sub(3, |w| {
            w.put(b"de");
            Ok::<_, Unfilled>(())
        });
        assert_eq!(r, Err(Unfilled { written: 2, len: 3 }));
        assert_eq!(o.written(), b"habcde");
        // An error passes through.
        let r: Result<(), Unfilled> = o.sub(1, |_| Err(Unfilled { written: 9, len: 9 }));
        assert_eq!(r.unwrap_err().written, 9);
        // `rest` children advance their parent when dropped.
        {
            let mut rest = o.rest();
            assert_eq!(rest.len(), 2);
            rest.put_byte(b'f');
        }
        assert_eq!(o.filled(), 7);
        o.rest().rest().put_byte(b'g');
        assert!(o.is_full());
        drop(o);
        assert_eq!(b, *b"habcdefg");
    }

    #[test]
    fn attempts_count_only_on_success_and_over_checks_fullness() {
        let mut b = [0u8; 4];
        let mut o = OutBuf::from_init(&mut b);
        let r: Result<(), ()> = o.attempt(|w| {
            w.put(b"xx");
            Err(())
        });
        assert!(r.is_err());
        assert_eq!(o.filled(), 0);
        let r: Result<u8, ()> = o.attempt(|w| {
            w.put(b"abc");
            Ok(1)
        });
        assert_eq!((r, o.written()), (Ok(1), &b"abc"[..]));
        let mut b = [0u8; 3];
        assert_eq!(
            OutBuf::over(&mut b, |w| {
                w.put(b"ab");
                Ok::<_, Unfilled>(())
            }),
            Err(Unfilled { written: 2, len: 3 })
        );
        assert_eq!(
            OutBuf::over(&mut b, |w| {
                w.put(b"xyz");
                Ok::<_, Unfilled>(())
            }),
            Ok(())
        );
        assert_eq!(&b, b"xyz");
    }

    #[test]
    fn split_advances_over_the_complete_leading_windows() {
        let mut v = Vec::new();
        let r: Result<(), Unfilled> = fill_range(&mut v, 0, 6, |o| {
            o.split([2, 3, 1], |w| {
                w[2].put(b"z");
                w[0].put(b"ab");
                w[1].put(b"cd");
            });
            // Windows 0 and the written start of 1: the rest is not written yet.
            assert_eq!(o.filled(), 4);
            assert_eq!(o.written(), b"abcd");
            Ok(())
        });
        assert_eq!(r, Err(Unfilled { written: 4, len: 6 }));
        assert!(v.is_empty());
        let r = fill_range::<_, Unfilled>(&mut v, 0, 6, |o| {
            o.split([2, 3, 1], |w| {
                for (i, w) in w.iter_mut().enumerate() {
                    w.fill(b'0' + i as u8, w.len());
                }
            });
            Ok(())
        });
        assert!(r.is_ok());
        assert_eq!(v, b"001112");
    }

    #[test]
    fn replaced_cursors_count_for_nothing() {
        // A writer may swap in a cursor over other memory that it fills: that proves nothing
        // about its own window.
        let leaked = |n: usize| OutBuf::from_init(Box::leak(vec![0u8; n].into_boxed_slice()));
        let mut v = b"ab".to_vec();
        let r = fill_range::<_, Unfilled>(&mut v, 2, 3, |o| {
            *o = leaked(3);
            o.put(b"xyz");
            Ok(())
        });
        assert_eq!(r, Err(Unfilled { written: 0, len: 3 }));
        assert_eq!(v, b"ab");
        let r = fill_range::<_, Unfilled>(&mut v, 2, 4, |o| {
            o.split([2, 2], |w| {
                w[0].put(b"cd");
                w.swap(0, 1);
                w[1] = leaked(2);
                w[1].put(b"ef");
            });
            assert_eq!(o.filled(), 0);
            o.split([2, 2], |w| {
                w[0].put(b"cd");
                w[1].put(b"ef");
            });
            assert_eq!(o.filled(), 4);
            Ok(())
        });
        assert_eq!(r, Ok(()));
        assert_eq!(v, b"abcdef");
        let mut b = [0u8; 4];
        let mut o = OutBuf::from_init(&mut b);
        let r = o.attempt(|w| {
            w.put_byte(1);
            *w = leaked(4);
            w.put(b"1234");
            Ok::<_, ()>(())
        });
        assert_eq!((r, o.filled()), (Ok(()), 0));
        let r = o.sub(2, |w| {
            w.put_byte(b'q');
            *w = leaked(2);
            w.put(b"zz");
            Ok::<_, Unfilled>(())
        });
        assert_eq!(r, Err(Unfilled { written: 0, len: 2 }));
        assert_eq!(o.written(), b"q");
    }

    #[test]
    fn init_with_hands_out_initialised_bytes() {
        let mut v = vec![7u8];
        fill_range::<_, Unfilled>(&mut v, 1, 4, |o| {
            o.init_with(4, |b: &mut [u8]| {
                assert!(b.iter().all(|&x| x == POISON));
                b.copy_from_slice(b"1234");
                Ok::<_, Unfilled>(())
            })
        })
        .unwrap();
        assert_eq!(v, b"\x071234");
        // On error nothing counts as written.
        let mut b = [0u8; 2];
        let mut o = OutBuf::from_init(&mut b);
        assert!(o.init_with(2, |_| Err::<(), ()>(())).is_err());
        assert_eq!(o.filled(), 0);
    }

    #[test]
    fn raw_access_reports_what_was_written() {
        let mut v = Vec::new();
        fill_range::<_, Unfilled>(&mut v, 0, 3, |o| {
            // SAFETY: only initialised values are written, and exactly 3 bytes are reported.
            unsafe {
                let spare = o.spare_mut();
                assert_eq!(spare.len(), 3);
                write_slice(spare, b"xyz");
                o.assume_written(3);
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(v, b"xyz");
    }
}
