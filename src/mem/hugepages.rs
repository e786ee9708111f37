//! Large zeroed result buffers backed by transparent huge pages where the kernel offers them.
//!
//! An array read fills a result of hundreds of MiB that nothing has touched before: with 4 KiB
//! pages, perf attributes a quarter of a read of uncompressed tiles to page faults on it. On
//! Linux with transparent huge pages in `madvise` mode, advising `MADV_HUGEPAGE` on the fresh
//! allocation makes each fault map 2 MiB instead. The advice is a hint: when it fails or the
//! kernel has no huge pages, the buffer is the same zeroed vector with ordinary pages.

/// Buffers below this size keep ordinary pages (the advice costs a system call).
const MIN_ADVISED: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// A zeroed vector of `len` bytes; large ones are advised to use huge pages.
pub(crate) fn zeroed(len: usize) -> Vec<u8> {
    let v = vec![0u8; len];
    advise_huge(v.as_ptr().cast(), len);
    v
}

/// An empty vector with room for `n` values; a large one is advised to use huge pages.
pub(crate) fn with_capacity<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_ptr().cast(), v.capacity() * size_of::<T>());
    v
}

/// Advises huge pages for the whole 2 MiB pages inside `[start, start + len)` of a live
/// allocation, when it is large enough to be worth a system call.
#[cfg(target_os = "linux")]
fn advise_huge(start: *const u8, len: usize) {
    if len < MIN_ADVISED {
        return;
    }
    let offset = start.align_offset(HUGE_PAGE);
    let Some(rest) = len.checked_sub(offset) else {
        return;
    };
    let whole = rest & !(HUGE_PAGE - 1);
    if whole > 0 {
        // SAFETY: [start + offset, start + offset + whole) lies inside the caller's live
        // allocation (offset + whole <= len) and is 2 MiB-aligned; MADV_HUGEPAGE changes only
        // how future page faults are served, never the contents of the memory.
        unsafe {
            libc::madvise(
                start.add(offset) as *mut libc::c_void,
                whole,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: *const u8, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_buffers_are_zero_and_writable() {
        for len in [0, 1, MIN_ADVISED - 1, MIN_ADVISED, 3 * HUGE_PAGE + 123] {
            let mut v = zeroed(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|b| *b == 0));
            if let Some(last) = v.last_mut() {
                *last = 7;
            }
        }
    }

    #[test]
    fn capacity_buffers_hold_what_is_pushed() {
        let mut v: Vec<u64> = with_capacity(MIN_ADVISED);
        assert!(v.is_empty() && v.capacity() >= MIN_ADVISED);
        v.extend(0..MIN_ADVISED as u64);
        assert_eq!(v[12345], 12345);
    }
}
