//! NONE (0): forwards metadata and data unchanged (docs/FORMAT.md §5.1).

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow};
use crate::filters::config::Filter;
use crate::filters::registry::{FilterDescriptor, OptionsLayout, growth};
use crate::format::filter_type::FilterType;

/// Forward: metadata and data forwarded.
pub fn forward(input: FwdIn<'_>, out: FwdOut<'_>) -> DataFlow {
    out.md.extend_forwarded(input.md);
    DataFlow::Forwarded
}

/// Reverse: metadata and data forwarded.
pub fn reverse() -> (MdFlow, DataFlow) {
    (MdFlow::Rest(0), DataFlow::Forwarded)
}

/// The None filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    filter_type: FilterType::None,
    default: Filter::None,
    positional: None,
    layout: OptionsLayout::Empty,
    forward: |_, _, input, out| Ok(forward(input, out)),
    reverse: |_, _, _, _| Ok(reverse()),
    fixed_growth: growth::same,
    unbounded_on_strings: false,
    reverse_max_ratio: 1,
    encodes_empty_part: true,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::{PartList, Parts};

    #[test]
    fn forwards_and_drops_an_empty_data_part() {
        let (mut md, mut data) = (PartList::default(), PartList::default());
        let lens = [0usize];
        let input = FwdIn {
            md: Parts::EMPTY,
            data: Parts::new(&[], &lens),
        };
        let flow = forward(
            input,
            FwdOut {
                md: &mut md,
                data: &mut data,
            },
        );
        assert_eq!(flow, DataFlow::Forwarded);
        assert_eq!(md.as_parts().count(), 0);
        assert_eq!(reverse(), (MdFlow::Rest(0), DataFlow::Forwarded));
    }
}
