//! placeholder during the split
