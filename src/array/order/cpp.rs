//! C++ behaviours TileDB's bytes and messages inherit, reproduced: `double` → `uint64_t`
//! conversion, `%g` output, `strncmp`, libstdc++'s `std::sort` (introsort; the arrangement of
//! equal elements is its own) and TileDB's `parallel_sort` over it.

/// A `double` converted to `uint64_t` as x86-64 code compiled by GCC or Clang does it: exact
/// truncation in range, NaN to 2^63 and negative values through `int64_t`.
pub(crate) fn cpp_f64_to_u64(x: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() {
        1 << 63
    } else if x < TWO_63 {
        if x <= -TWO_63 {
            1 << 63
        } else {
            x as i64 as u64
        }
    } else if x < 2.0 * TWO_63 {
        ((x - TWO_63) as u64) ^ (1 << 63)
    } else {
        0
    }
}

/// C++'s default floating-point output (`%g` with `precision` significant digits).
pub(crate) fn cpp_general(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let p = precision.max(1);
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{v:.decimals$}"))
    }
}

/// TileDB's `parallel_sort` (tiledb/sm/misc/parallel_functions.h): middle-pivot quicksort
/// partitions down to a depth set by the concurrency level, then `std::sort` on each part.
pub(crate) fn tiledb_parallel_sort<F: Fn(u64, u64) -> bool + Sync>(
    v: &mut [u64],
    concurrency: usize,
    less: &F,
) {
    let mut height = 1;
    let mut width = 1usize;
    while width <= concurrency {
        height += 1;
        width *= 2;
    }
    if width > concurrency {
        height += 1;
    }
    quick_sort(v, 0, height, less);
}

pub(crate) fn quick_sort<F: Fn(u64, u64) -> bool + Sync>(
    v: &mut [u64],
    depth: usize,
    height: usize,
    less: &F,
) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    if n <= 2 || depth + 1 == height {
        std_sort(v, less);
        return;
    }
    let pivot_at = n / 2;
    let pivot = v[pivot_at];
    if n - 1 != pivot_at {
        v.swap(n - 1, pivot_at);
    }
    let mut middle = 0;
    for i in 0..n - 1 {
        if less(v[i], pivot) {
            v.swap(middle, i);
            middle += 1;
        }
    }
    v.swap(middle, n - 1);
    let (left, right) = v.split_at_mut(middle);
    rayon::join(
        || quick_sort(left, depth + 1, height, less),
        || quick_sort(&mut right[1..], depth + 1, height, less),
    );
}

/// libstdc++'s `std::sort`: introsort (median-of-three pivots, Hoare partitions, heapsort
/// past `2 log2(n)` levels) down to runs of 16, then one insertion sort.
pub(crate) fn std_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    if v.len() > 1 {
        let depth_limit = 2 * (usize::BITS - 1 - v.len().leading_zeros()) as usize;
        introsort_loop(v, depth_limit, less);
        final_insertion_sort(v, less);
    }
}

const STD_SORT_THRESHOLD: usize = 16;

pub(crate) fn introsort_loop<F: Fn(u64, u64) -> bool>(
    mut v: &mut [u64],
    mut depth_limit: usize,
    less: &F,
) {
    while v.len() > STD_SORT_THRESHOLD {
        if depth_limit == 0 {
            heap_sort(v, less);
            return;
        }
        depth_limit -= 1;
        let cut = partition_pivot(v, less);
        let (left, right) = v.split_at_mut(cut);
        introsort_loop(right, depth_limit, less);
        v = left;
    }
}

/// Moves the median of elements 1, the middle and the last to the front, then partitions
/// the rest around it; returns where the right part starts.
pub(crate) fn partition_pivot<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) -> usize {
    let n = v.len();
    let (a, b, c) = (1, n / 2, n - 1);
    let median = if less(v[a], v[b]) {
        if less(v[b], v[c]) {
            b
        } else if less(v[a], v[c]) {
            c
        } else {
            a
        }
    } else if less(v[a], v[c]) {
        a
    } else if less(v[b], v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    let pivot = v[0];
    let (mut first, mut last) = (1, n);
    loop {
        while less(v[first], pivot) {
            first += 1;
        }
        last -= 1;
        while less(pivot, v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

pub(crate) fn final_insertion_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    if v.len() > STD_SORT_THRESHOLD {
        insertion_sort(&mut v[..STD_SORT_THRESHOLD], less);
        for i in STD_SORT_THRESHOLD..v.len() {
            linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

pub(crate) fn insertion_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    for i in 1..v.len() {
        if less(v[i], v[0]) {
            v[..=i].rotate_right(1);
        } else {
            linear_insert(v, i, less);
        }
    }
}

/// Moves `v[i]` left past the elements it is below (an element not above it stops it).
pub(crate) fn linear_insert<F: Fn(u64, u64) -> bool>(v: &mut [u64], mut i: usize, less: &F) {
    let val = v[i];
    while i > 0 && less(val, v[i - 1]) {
        v[i] = v[i - 1];
        i -= 1;
    }
    v[i] = val;
}

/// libstdc++'s `std::__partial_sort(first, last, last)`: make_heap, then sort_heap.
pub(crate) fn heap_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[parent];
            adjust_heap(v, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, value, less);
    }
}

pub(crate) fn adjust_heap<F: Fn(u64, u64) -> bool>(
    v: &mut [u64],
    mut hole: usize,
    len: usize,
    value: u64,
    less: &F,
) {
    let top = hole;
    let mut child = hole;
    while child < len.saturating_sub(1) / 2 {
        child = 2 * (child + 1);
        if less(v[child], v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len & 1 == 0 && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(v[parent], value) {
            break;
        }
        v[hole] = v[parent];
        hole = parent;
    }
    v[hole] = value;
}

/// C's `strncmp`: bytes compared as unsigned, stopping after `n` bytes or at a zero byte both
/// strings share.
pub fn strncmp(a: &[u8], b: &[u8], n: usize) -> std::cmp::Ordering {
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x.cmp(&y);
        }
        if x == 0 {
            break;
        }
    }
    std::cmp::Ordering::Equal
}
