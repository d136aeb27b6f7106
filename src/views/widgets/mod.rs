//! Drawing pieces several views share: eighth-block bars, the bordered pane frame,
//! centred hints. Human units for durations are model data: [`crate::model::units`].

pub mod bars;
