//! Arbitrary bytes and a format version → `Pipeline::deserialize`; whatever parses must
//! serialize and parse back to the same pipeline: the same filter types and the same bytes
//! (compared as bytes: a SCALE_FLOAT factor may be NaN, which is never equal to itself).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::Pipeline;

fuzz_target!(|data: &[u8]| {
    let Some((&v, bytes)) = data.split_first() else { return };
    let version = u32::from(v % 23);
    if let Ok(p) = Pipeline::deserialize(bytes, version) {
        let again = Pipeline::deserialize(&p.serialize(), tdbfilter::pipeline::FORMAT_VERSION)
            .expect("a serialized pipeline parses");
        let types = |q: &Pipeline| q.filters().iter().map(|f| f.filter_type()).collect::<Vec<_>>();
        assert_eq!(types(&again), types(&p), "filters change across serialize/deserialize");
        assert_eq!(again.max_chunk_size(), p.max_chunk_size());
        assert_eq!(again.serialize(), p.serialize(), "serialization is not stable");
    }
});
