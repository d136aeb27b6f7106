//! Drawing pieces several views share: eighth-block bars, the bordered pane frame,
//! centred hints, and human units for durations.

pub mod bars;
pub mod units;
