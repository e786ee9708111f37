//! The machinery filters run in, independent of any one filter: the tile and its encryption
//! key, the part lists a stage reads and writes, the stage contexts, per-thread scratch and
//! codec contexts, and the thread pools and host executors chunks are spread over.

pub mod encryption_key;
pub mod parts;
pub mod stage;
pub mod thread_scratch;
pub mod threads;
pub mod tile;
