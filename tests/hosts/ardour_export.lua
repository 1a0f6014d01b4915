-- Dyeflow's VST3 in Ardour 7, headless (ardour7-lua): a session with one stereo audio track
-- holding the plugin plays for 2 s in real time (no capture may come of it), then exports a
-- range as a WAV file (the engine freewheels: Ardour 7 flags those blocks offline, and only
-- there). tests/it/hosts.rs runs it and checks the bounce capture the export leaves.
--
-- Usage: ardour7-lua ardour_export.lua SESSION_DIR EXPORT_DIR SECONDS
-- (VST3_PATH must name the folder holding Dyeflow.vst3, scanned beforehand with
-- ardour-vst3-scanner; DYEFLOW_CAPTURE_DIR where the captures go.)

local session_dir, export_dir, seconds = arg[1], arg[2], tonumber(arg[3])
assert(session_dir and export_dir and seconds, "usage: SESSION_DIR EXPORT_DIR SECONDS")

local s = create_session(session_dir, "dyeflow", 48000)
assert(s, "cannot create the session")
local tracks = Session:new_audio_track(2, 2, nil, 1, "Dyeflow",
  ARDOUR.PresentationInfo.max_order, ARDOUR.TrackMode.Normal, true)
local track = tracks:front()
-- Dyeflow's VST3 class id (VST3_CLASS_ID, b"DyeflowFluidVis1", as hex).
local plugin = ARDOUR.LuaAPI.new_plugin(Session, "447965666C6F77466C75696456697331",
  ARDOUR.PluginType.VST3, "")
assert(not plugin:isnil(), "Dyeflow.vst3 not found (VST3_PATH, scan cache)")
assert(track:add_processor_by_index(plugin, 0, nil, true) == 0, "cannot add the plugin")
print("ardour: plugin added")

Session:request_roll(ARDOUR.TransportRequestSource.TRS_UI)
sleep(2)
Session:request_stop(false, false, ARDOUR.TransportRequestSource.TRS_UI)
sleep(1)
print("ardour: played 2 s in real time")

local export = Session:simple_export()
export:set_name("bounce")
export:set_folder(export_dir)
export:set_range(0, 48000 * seconds)
-- "WAV @ session-rate", one of Ardour's own presets.
assert(export:set_preset("75969a1c-3133-4694-864b-a1fa50e43348"), "no WAV export preset")
assert(export:run_export(), "the export failed")
print("ardour: exported")
close_session()
quit()
