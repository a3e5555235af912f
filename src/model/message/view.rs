//! The envelope's typed view: what serde (`envelope`) or the skimmer (`skim`) fills from a
//! message object, the spans of its fields; no reading.

use std::borrow::Cow;

use serde::Deserialize;

use super::params::Params;
use super::raw::{Raw, borrowed_str, present};
use super::result::ResultView;

#[derive(Deserialize, Default)]
pub(super) struct Typed<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    pub(super) id: Option<Raw<'a>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    pub(super) method: Option<Cow<'a, str>>,
    // Boxed: a params or result view is several hundred bytes, and the typed view is moved a
    // few times on its way out of serde (those copies were a seventh of parsing on small.log).
    #[serde(borrow)]
    pub(super) params: Option<Box<Params<'a>>>,
    #[serde(borrow)]
    pub(super) result: Option<Box<ResultView<'a>>>,
    #[serde(borrow)]
    pub(super) error: Option<ErrorView<'a>>,
}

#[derive(Deserialize)]
pub(super) struct ErrorView<'a> {
    #[serde(borrow)]
    pub(super) code: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) message: Option<Raw<'a>>,
}
