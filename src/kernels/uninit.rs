//! Filling a `Vec<u8>` through its uninitialised capacity, without zero-filling it first.
//!
//! Outputs that are about to be overwritten entirely (an unfiltered tile, a shuffled part)
//! used to be zero-filled by `Vec::resize` first: a full extra pass over memory that perf
//! attributed 3–4% of the shuffle rows to. [`fill_range`] hands the range to a writer instead
//! and makes it part of the vector only once the writer has succeeded.
//!
//! The contract is the writer's: on success it has written every byte of the slice it was
//! given. Callers in this crate meet it structurally (see each call site). On failure the
//! vector keeps its old length, so no byte the writer may have skipped is ever inside it. In
//! debug builds and in this crate's unit tests (`cargo test --lib`, release too) the uninitialised part
//! is first filled with a poison pattern, so that a writer skipping bytes shows up as wrong
//! output in the byte-for-byte tests instead of going unnoticed.

/// The byte debug builds fill uninitialised ranges with before handing them out.
#[cfg(any(debug_assertions, test))]
const POISON: u8 = 0xA5;

/// Lets `fill` write `buf[start..start + len]`, where the bytes at and past `buf.len()` are
/// not initialised (old contents of initialised bytes are unspecified to the writer too), and
/// on success extends `buf` to at least `start + len`; returns what `fill` returned. On error
/// `buf` keeps its length.
///
/// `fill` must write every byte of its slice when it returns `Ok` (the crate-internal contract
/// of this helper; see the module docs).
///
/// # Panics
///
/// If `start > buf.len()`, or `start + len` overflows.
pub(crate) fn fill_range<R, E>(
    buf: &mut Vec<u8>,
    start: usize,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<R, E>,
) -> Result<R, E> {
    assert!(
        start <= buf.len(),
        "fill_range starts past the vector's end"
    );
    let end = start.checked_add(len).expect("fill_range end overflows");
    let old_len = buf.len();
    if end > old_len {
        buf.reserve(end - old_len);
        #[cfg(any(debug_assertions, test))]
        for b in &mut buf.spare_capacity_mut()[..end - old_len] {
            b.write(POISON);
        }
    }
    // SAFETY: `reserve` made the capacity at least `end`, so `start..end` lies inside the
    // allocation, and `&mut buf` makes the slice the only access to it while it lives. Bytes
    // past `old_len` may be uninitialised while `fill` runs; `u8` has no invalid values and
    // the writer's contract is to write all of them before returning `Ok`, so nothing reads
    // an uninitialised byte.
    let slice = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().add(start), len) };
    let result = fill(slice)?;
    if end > old_len {
        // SAFETY: `end ≤ capacity`, and `fill` succeeded, so every byte of `start..end` was
        // written; `0..start` was initialised before (`start ≤ old_len`).
        unsafe { buf.set_len(end) };
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::fill_range;

    #[test]
    fn extends_only_on_success() {
        let mut v = b"abc".to_vec();
        let r: Result<(), ()> = fill_range(&mut v, 1, 4, |s| {
            s.copy_from_slice(b"WXYZ");
            Ok(())
        });
        assert!(r.is_ok());
        assert_eq!(v, b"aWXYZ");
        // A failing writer leaves the vector as it was.
        let r: Result<(), &str> = fill_range(&mut v, 5, 1000, |s| {
            s[0] = 1;
            Err("no")
        });
        assert_eq!(r, Err("no"));
        assert_eq!(v, b"aWXYZ");
        // Inside the initialised part the length stays.
        fill_range::<_, ()>(&mut v, 0, 2, |s| {
            s.copy_from_slice(b"01");
            Ok(7)
        })
        .unwrap();
        assert_eq!(v, b"01XYZ");
        // From empty, and an empty range.
        let mut e = Vec::new();
        fill_range::<_, ()>(&mut e, 0, 0, |s| {
            assert!(s.is_empty());
            Ok(())
        })
        .unwrap();
        assert!(e.is_empty());
    }

    #[test]
    #[should_panic(expected = "starts past")]
    fn start_past_the_end_panics() {
        let mut v = vec![0u8; 2];
        let _ = fill_range::<_, ()>(&mut v, 3, 1, |_| Ok(()));
    }
}
