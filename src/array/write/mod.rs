pub mod global_order;
