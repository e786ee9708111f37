//! Building result fields cell by cell from the fields of one or more partial reads.

use crate::array::FieldData;
use crate::array::schema::VAR_NUM;

/// Bytes per cell of a fixed-size field.
pub(crate) fn cell_size(f: &FieldData) -> usize {
    f.datatype.size() * f.cell_val_num as usize
}

/// The field of `picks.len()` cells whose cell `k` is cell `picks[k].1` of `parts[picks[k].0]`
/// (every part a read of the same field).
pub(crate) fn gather(
    template: &FieldData,
    parts: &[&FieldData],
    picks: &[(u32, u64)],
) -> FieldData {
    let n = picks.len();
    let var = template.cell_val_num == VAR_NUM;
    let mut data = Vec::new();
    let mut offsets = var.then(|| Vec::with_capacity(n));
    let mut validity = template.validity.as_ref().map(|_| Vec::with_capacity(n));
    let cs = cell_size(template);
    if !var {
        data.reserve(n * cs);
    }
    for &(p, c) in picks {
        let part = parts[p as usize];
        let c = c as usize;
        if let Some(o) = offsets.as_mut() {
            o.push(data.len() as u64);
            data.extend_from_slice(part.cell(c));
        } else {
            data.extend_from_slice(&part.data[c * cs..(c + 1) * cs]);
        }
        if let (Some(v), Some(pv)) = (validity.as_mut(), part.validity.as_ref()) {
            v.push(pv[c]);
        }
    }
    FieldData {
        name: template.name.clone(),
        datatype: template.datatype,
        cell_val_num: template.cell_val_num,
        data,
        offsets,
        validity,
        cell_count: n as u64,
    }
}

/// Gives the cells of `f` whose flag in `pass` is false the value `fill` and validity
/// `fill_valid` (a dense query's cells failing its condition).
pub(crate) fn fill_failing(f: &mut FieldData, pass: &[bool], fill: &[u8], fill_valid: u8) {
    if pass.iter().all(|p| *p) {
        return;
    }
    if let Some(v) = f.validity.as_mut() {
        for (v, p) in v.iter_mut().zip(pass) {
            if !p {
                *v = fill_valid;
            }
        }
    }
    if f.cell_val_num == VAR_NUM {
        let mut data = Vec::with_capacity(f.data.len());
        let mut offsets = Vec::with_capacity(pass.len());
        for (i, p) in pass.iter().enumerate() {
            offsets.push(data.len() as u64);
            if *p {
                data.extend_from_slice(f.cell(i));
            } else {
                data.extend_from_slice(fill);
            }
        }
        f.data = data;
        f.offsets = Some(offsets);
    } else {
        let cs = cell_size(f);
        for (i, p) in pass.iter().enumerate() {
            if !p && fill.len() == cs {
                f.data[i * cs..(i + 1) * cs].copy_from_slice(fill);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Datatype;

    fn strings(name: &str, cells: &[&str]) -> FieldData {
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        for c in cells {
            offsets.push(data.len() as u64);
            data.extend_from_slice(c.as_bytes());
        }
        FieldData {
            name: name.into(),
            datatype: Datatype::StringAscii,
            cell_val_num: VAR_NUM,
            data,
            offsets: Some(offsets),
            validity: Some(vec![1; cells.len()]),
            cell_count: cells.len() as u64,
        }
    }

    #[test]
    fn gathers_across_parts_and_fills() {
        let a = strings("s", &["a", "bb"]);
        let b = strings("s", &["ccc"]);
        let mut g = gather(&a, &[&a, &b], &[(1, 0), (0, 1), (0, 1), (0, 0)]);
        assert_eq!(g.data, b"cccbbbba");
        assert_eq!(g.offsets, Some(vec![0, 3, 5, 7]));
        fill_failing(&mut g, &[true, false, true, true], b"", 0);
        assert_eq!(g.data, b"cccbba");
        assert_eq!(g.validity, Some(vec![1, 0, 1, 1]));
        let ints = FieldData {
            name: "i".into(),
            datatype: Datatype::Int16,
            cell_val_num: 1,
            data: vec![1, 0, 2, 0],
            offsets: None,
            validity: None,
            cell_count: 2,
        };
        let mut g = gather(&ints, &[&ints], &[(0, 1), (0, 0)]);
        assert_eq!(g.data, [2, 0, 1, 0]);
        fill_failing(&mut g, &[false, true], &[9, 9], 0);
        assert_eq!(g.data, [9, 9, 1, 0]);
    }
}
