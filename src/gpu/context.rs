//! The wgpu device: created on the simulation thread, with only the features and limits the
//! solver needs, and with an error handler that records failures instead of panicking (wgpu's
//! default handler panics, which would take the host down with it).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why the GPU cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    /// GPU use was switched off (setting, environment, or a test forcing the fallback).
    #[error("the GPU is switched off ({0})")]
    Disabled(String),
    /// No suitable adapter was found.
    #[error("no GPU adapter found: {0}")]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("could not create a GPU device on {adapter}: {message}")]
    Device { adapter: String, message: String },
    /// The grid does not fit the device's limits.
    #[error("the grid needs a {needed} byte buffer; {adapter} allows {allowed}")]
    TooLarge {
        adapter: String,
        needed: u64,
        allowed: u64,
    },
    /// The device reported an error (validation, out of memory, shader) or was lost.
    #[error("GPU failure on {adapter}: {message}")]
    Failed { adapter: String, message: String },
    /// Only a software adapter (Mesa's llvmpipe/lavapipe, WARP, SwiftShader) was found, and a
    /// hardware one was asked for: on those the CPU solver is several times faster.
    #[error("{0} is a software GPU; the CPU solver is faster")]
    Software(String),
}

/// Records the first uncaptured error or device loss, from whatever thread wgpu reports it.
#[derive(Debug, Default)]
pub struct ErrorSink {
    failed: AtomicBool,
    message: parking_lot::Mutex<Option<String>>,
}

impl ErrorSink {
    fn record(&self, message: String) {
        nice_plug::nice_error!("GPU error: {message}");
        let mut slot = self.message.lock();
        if slot.is_none() {
            *slot = Some(message);
        }
        self.failed.store(true, Ordering::Release);
    }

    /// The first recorded failure, if any.
    pub fn failure(&self) -> Option<String> {
        if self.failed.load(Ordering::Acquire) {
            self.message.lock().clone()
        } else {
            None
        }
    }
}

/// How to pick the GPU.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Behave as if there were no adapter (tests of the fallback; the `DYEFLOW_NO_GPU`
    /// environment variable does the same).
    pub force_no_adapter: bool,
    /// Refuse a software adapter (wgpu's `DeviceType::Cpu`: llvmpipe, lavapipe, WARP,
    /// SwiftShader), which runs the shaders on the CPU several times slower than the CPU
    /// solver. The Auto backend sets it; choosing the GPU explicitly does not.
    pub hardware_only: bool,
}

/// A device and queue with their adapter's description. A clone shares them (the particle
/// fluid's picture runs on its physics' device).
#[derive(Clone)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// The adapter's name, driver and backend.
    pub info: wgpu::AdapterInfo,
    /// Whether timestamp queries are available (GPU timing in the bench).
    pub timestamps: bool,
    /// Failures reported by the device.
    pub errors: Arc<ErrorSink>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.info.name)
            .finish()
    }
}

impl GpuContext {
    /// Find an adapter and create a device. Blocks (a few ms to a second); call it on the
    /// simulation thread, never on a host's main or audio thread.
    pub fn new(options: &GpuOptions) -> Result<Self, GpuError> {
        if options.force_no_adapter {
            return Err(GpuError::Disabled("forced".into()));
        }
        if std::env::var_os("DYEFLOW_NO_GPU").is_some_and(|v| !v.is_empty() && v != "0") {
            return Err(GpuError::Disabled("DYEFLOW_NO_GPU is set".into()));
        }
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        if options.hardware_only && info.device_type == wgpu::DeviceType::Cpu {
            return Err(GpuError::Software(info.name));
        }
        let supported = adapter.limits();
        // Only what the solver needs: large storage buffers for fine dye grids, and
        // timestamps when the adapter has them.
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: supported.max_storage_buffer_binding_size,
            max_buffer_size: supported.max_buffer_size,
            max_storage_buffers_per_shader_stage: 8,
            ..wgpu::Limits::downlevel_defaults()
        };
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let features = if timestamps {
            wgpu::Features::TIMESTAMP_QUERY
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("Dyeflow solver"),
            required_features: features,
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| GpuError::Device {
            adapter: info.name.clone(),
            message: e.to_string(),
        })?;
        let errors = Arc::new(ErrorSink::default());
        {
            let errors = errors.clone();
            device
                .on_uncaptured_error(Arc::new(move |e: wgpu::Error| errors.record(e.to_string())));
        }
        {
            let errors = errors.clone();
            device.set_device_lost_callback(move |reason, message| {
                errors.record(format!("device lost ({reason:?}): {message}"))
            });
        }
        Ok(Self {
            device,
            queue,
            info,
            timestamps,
            errors,
        })
    }

    /// The adapter's name for the UI: "name (backend)".
    pub fn adapter_name(&self) -> String {
        format!("{} ({:?})", self.info.name, self.info.backend)
    }

    /// The first failure the device reported, as an error.
    pub fn check(&self) -> Result<(), GpuError> {
        match self.errors.failure() {
            Some(message) => Err(GpuError::Failed {
                adapter: self.info.name.clone(),
                message,
            }),
            None => Ok(()),
        }
    }
}
