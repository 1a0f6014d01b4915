//! The picture effects' parameters (the filmic tone mode's bloom, sunrays, shading, palette
//! and background), nested into [`super::DyeflowParams`] under the group "Picture". Their
//! ids are as stable as the others' (a nested struct without a prefix keeps them as written).
//!
//! New instances start with a show look; states saved before the effects existed (version
//! < 4) load with every effect off ([`migrate_to_v4`]), as they looked.

use super::{S2v, V2s, s2v_number, s2v_percent, v2s_adaptive, v2s_percent};
use crate::fluid::Palette;
use nice_plug::plugin::{ParamValue, PluginState};
use nice_plug::prelude::*;
use std::sync::Arc;

/// Ids that [`migrate_to_v4`] writes (the effects that change the picture).
pub const BLOOM_ID: &str = "bloom";
pub const RAYS_ID: &str = "rays";
pub const SHADING_ID: &str = "shade";
pub const PALETTE_ID: &str = "palette";
pub const BACKGROUND_ID: &str = "bg_bright";
/// Id of vibrance (written by [`migrate_to_v8`]).
pub const VIBRANCE_ID: &str = "vibrance";

/// The effects' parameters.
#[derive(Params)]
pub struct EffectsParams {
    /// Bloom intensity: the glow is this times the light above the threshold (0: off).
    #[id = "bloom"]
    pub bloom: FloatParam,
    /// Light (brightest channel, before the tone curve; 1 = dye 1 at 100 % brightness) from
    /// which the bloom starts.
    #[id = "bloom_thr"]
    pub bloom_threshold: FloatParam,
    /// Softness of the threshold, as a share of it.
    #[id = "bloom_knee"]
    pub bloom_knee: FloatParam,
    /// How far the bloom spreads (how much of the glow comes from the wide mip levels).
    #[id = "bloom_rad"]
    pub bloom_radius: FloatParam,
    /// Sunrays from bright dye (0: off).
    #[id = "rays"]
    pub rays: FloatParam,
    /// Shading of the dye's relief (0: off).
    #[id = "shade"]
    pub shading: FloatParam,
    /// Where the shading's light comes from, degrees anticlockwise from the right.
    #[id = "light_dir"]
    pub light_angle: FloatParam,
    /// A gradient map of the light's luminance (0: off, the dye's colours). An integer with
    /// names rather than an enum, so presets carry it as a number.
    #[id = "palette"]
    pub palette: IntParam,
    /// Background colour: hue, saturation, and brightness (the value its brightest channel
    /// shows at, 0..1 of full scale).
    #[id = "bg_hue"]
    pub bg_hue: FloatParam,
    #[id = "bg_sat"]
    pub bg_saturation: FloatParam,
    #[id = "bg_bright"]
    pub bg_brightness: FloatParam,
    /// Vibrance: dull colours (where dyes mix or glow) pushed away from grey, keeping hue and
    /// luminance (0: off).
    #[id = "vibrance"]
    pub vibrance: FloatParam,
}

/// Bloom intensity, 1.0 = 100 %.
pub fn bloom_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 2.0 }
}

/// Bloom threshold in light units.
pub fn bloom_threshold_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 8.0,
        factor: FloatRange::skew_factor(-1.5),
    }
}

/// Shares 0..1 (knee, radius, shading, saturation).
pub fn unit_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 1.0 }
}

/// Sunrays amount, 1.0 = 100 %.
pub fn rays_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 2.0 }
}

/// Angles in degrees.
pub fn angle_range() -> FloatRange {
    FloatRange::Linear {
        min: 0.0,
        max: 360.0,
    }
}

/// Background brightness: the display value of its brightest channel (a dark backdrop).
pub fn bg_brightness_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 0.5 }
}

/// Palettes by index.
pub fn palette_range() -> IntRange {
    IntRange::Linear {
        min: 0,
        max: Palette::ALL.len() as i32 - 1,
    }
}

/// A palette's name.
pub fn v2s_palette(index: i32) -> String {
    Palette::from_index(index).name().to_owned()
}

/// A palette from its name (any case) or its index.
pub fn s2v_palette(text: &str) -> Option<i32> {
    let t = text.trim();
    Palette::ALL
        .iter()
        .position(|p| p.name().eq_ignore_ascii_case(t))
        .map(|i| i as i32)
        .or_else(|| {
            t.parse()
                .ok()
                .filter(|i| (0..Palette::ALL.len() as i32).contains(i))
        })
}

fn percent() -> (V2s, S2v) {
    (v2s_percent(0), s2v_percent())
}

fn degrees(name: &str, default: f32) -> FloatParam {
    FloatParam::new(name, default, angle_range())
        .with_unit("°")
        .with_value_to_string(formatters::v2s_f32_rounded(0))
        .with_string_to_value(s2v_number())
}

/// A fraction shown in percent (no decimals).
pub(super) fn share(name: &str, default: f32, range: FloatRange) -> FloatParam {
    let (v2s, s2v) = percent();
    FloatParam::new(name, default, range)
        .with_unit(" %")
        .with_value_to_string(v2s)
        .with_string_to_value(s2v)
}

impl Default for EffectsParams {
    /// A new instance's show look (chosen on the demo render, see NOTES-display.md).
    fn default() -> Self {
        Self {
            bloom: share("Bloom", 1.0, bloom_range()),
            bloom_threshold: FloatParam::new("Bloom threshold", 0.3, bloom_threshold_range())
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            bloom_knee: share("Bloom knee", 0.5, unit_range()),
            bloom_radius: share("Bloom radius", 0.75, unit_range()),
            rays: share("Sunrays", 0.6, rays_range()),
            shading: share("Shading", 0.35, unit_range()),
            light_angle: degrees("Light angle", 120.0),
            palette: IntParam::new("Palette", 0, palette_range())
                .with_value_to_string(Arc::new(v2s_palette))
                .with_string_to_value(Arc::new(s2v_palette)),
            bg_hue: degrees("Background hue", 235.0),
            bg_saturation: share("Background saturation", 0.7, unit_range()),
            bg_brightness: share("Background", 0.04, bg_brightness_range()),
            vibrance: share("Vibrance", 0.75, unit_range()),
        }
    }
}

/// 3 -> 4: the picture effects. Before them the filmic picture had no bloom, rays, shading,
/// palette or background, so an old project keeps that look (a value it names anyway is
/// kept).
pub fn migrate_to_v4(state: &mut PluginState) {
    for (id, off) in [
        (BLOOM_ID, ParamValue::F32(0.0)),
        (RAYS_ID, ParamValue::F32(0.0)),
        (SHADING_ID, ParamValue::F32(0.0)),
        (PALETTE_ID, ParamValue::I32(0)),
        (BACKGROUND_ID, ParamValue::F32(0.0)),
    ] {
        state.params.entry(id.to_owned()).or_insert(off);
    }
}

/// 7 -> 8: vibrance. Before it the picture had none, so an old project keeps its colours (a
/// value it names anyway is kept).
pub fn migrate_to_v8(state: &mut PluginState) {
    state
        .params
        .entry(VIBRANCE_ID.to_owned())
        .or_insert(ParamValue::F32(0.0));
}

#[cfg(test)]
mod tests {
    use super::super::{DyeflowParams, STATE_VERSION, STATE_VERSION_KEY, migrate_state};
    use super::*;

    /// A state saved before vibrance (version < 8) loads with it off; a value it names is
    /// kept; a current state keeps the new default.
    #[test]
    fn states_from_before_vibrance_load_without_it() {
        for version in [None, Some(4), Some(7)] {
            let mut s = state(version, &[]);
            migrate_state(&mut s);
            assert!(matches!(
                s.params.get(VIBRANCE_ID),
                Some(ParamValue::F32(0.0))
            ));
        }
        let mut s = state(Some(7), &[(VIBRANCE_ID, ParamValue::F32(0.4))]);
        migrate_state(&mut s);
        assert!(matches!(s.params[VIBRANCE_ID], ParamValue::F32(0.4)));
        let mut s = state(Some(STATE_VERSION), &[]);
        migrate_state(&mut s);
        assert!(!s.params.contains_key(VIBRANCE_ID));
        let p = DyeflowParams::default();
        assert!(p.param_map().iter().any(|(i, ..)| i == VIBRANCE_ID));
        assert_eq!(p.effects.vibrance.default_plain_value(), 0.75);
    }

    #[test]
    fn palette_text_round_trips() {
        for i in 0..Palette::ALL.len() as i32 {
            assert_eq!(s2v_palette(&v2s_palette(i)), Some(i));
        }
        assert_eq!(s2v_palette(" fire "), Some(1));
        assert_eq!(s2v_palette("5"), Some(5));
        assert_eq!(s2v_palette("9"), None);
        assert_eq!(s2v_palette("plaid"), None);
    }

    fn state(version: Option<u32>, params: &[(&str, ParamValue)]) -> PluginState {
        PluginState {
            version: String::new(),
            params: params
                .iter()
                .map(|(id, v)| ((*id).to_owned(), v.clone()))
                .collect(),
            fields: version
                .map(|v| (STATE_VERSION_KEY.to_owned(), v.to_string()))
                .into_iter()
                .collect(),
        }
    }

    /// A state from before the effects (any version below 4) loads with every effect off;
    /// a value it names is kept; a current state keeps the new defaults; the ids written are
    /// the parameters'.
    #[test]
    fn states_from_before_the_effects_load_without_them() {
        let ids = [BLOOM_ID, RAYS_ID, SHADING_ID, PALETTE_ID, BACKGROUND_ID];
        for version in [None, Some(1), Some(2), Some(3)] {
            let mut s = state(version, &[("bright", ParamValue::F32(1.5))]);
            migrate_state(&mut s);
            for id in ids {
                let off = matches!(
                    s.params.get(id),
                    Some(ParamValue::F32(0.0) | ParamValue::I32(0))
                );
                assert!(off, "version {version:?}: {id} is {:?}", s.params.get(id));
            }
            assert!(matches!(s.params["bright"], ParamValue::F32(1.5)));
            assert_eq!(s.fields[STATE_VERSION_KEY], STATE_VERSION.to_string());
        }
        let mut s = state(Some(3), &[(BLOOM_ID, ParamValue::F32(0.8))]);
        migrate_state(&mut s);
        assert!(matches!(s.params[BLOOM_ID], ParamValue::F32(0.8)));
        let mut s = state(Some(STATE_VERSION), &[]);
        migrate_state(&mut s);
        assert!(ids.iter().all(|id| !s.params.contains_key(*id)));
        let p = DyeflowParams::default();
        let map = p.param_map();
        for id in ids {
            assert!(map.iter().any(|(i, ..)| i == id), "{id}");
        }
        // A new instance shows off: bloom, rays, shading and a background on.
        let e = &p.effects;
        assert!(e.bloom.value() > 0.0 && e.rays.value() > 0.0 && e.shading.value() > 0.0);
        assert!(e.bg_brightness.value() > 0.0);
    }
}
