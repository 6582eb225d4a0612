//! `gpu`: the WGSL compute shader of `shaders/montgomery.wgsl` through wgpu, one residue chain
//! per GPU invocation (Vulkan, Metal or DX12).
//!
//! The shader is a template: [`kernel`] writes it out for the digit count of each modulus
//! (radix 2^28, straight-line code, 64-bit products), and the pipelines are compiled once per
//! digit count and kept. The host does what is cheap and awkward on a GPU: conversion into and
//! out of Montgomery form (x·R mod N, R = 2^(28·D)) with the final reduction below N, the
//! constant −N^(−1) mod 2^28, and the exponent-0 fix-up of `pow_many`. The GPU does the
//! squarings and multiplications. Long work is cut into submissions of bounded size
//! (`WORK_PER_SUBMISSION_GPU`) so that no single submission runs for long (watchdogs reset GPUs
//! whose work runs for seconds), with two in flight so the GPU does not idle between them; and,
//! on drivers that cap the loop iterations of an invocation (llvmpipe), into dispatches below
//! that cap.
//!
//! No adapter, an adapter without 64-bit integers in shaders, a failed device request or a GPU
//! error is an [`Error::Gpu`], never a panic: the caller falls back to a CPU backend.

mod kernel;

use super::radix::{self, Params};
use super::{check_below, check_pow_inputs, BatchBackend};
use crate::error::{Error, Result};
use crate::group::Modulus;
use num_bigint::BigUint;
use num_traits::{One, Zero};
use rayon::prelude::*;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use wgpu::util::DeviceExt;

/// Invocations per workgroup; `@workgroup_size` in the shader.
const WORKGROUP: u32 = 64;
/// Work per submission in digit products (items × steps × products of a step) on a CPU
/// driver: lavapipe on 2 cores does a few 10^8 a second, so a submission takes under a second.
const WORK_PER_SUBMISSION_CPU: u64 = 1 << 27;
/// The same on a real GPU: with tens of thousands of chains in flight a submission must hold
/// several steps, or its fixed cost (tens of µs) would dominate. An H100 does about 6·10^12
/// products a second here (docs/PERFORMANCE.md), so 2^36 is about 12 ms: far from any
/// watchdog, long against the fixed cost.
const WORK_PER_SUBMISSION_GPU: u64 = 1 << 36;
/// Steps (squarings or exponent bits) per submission at most, however small the batch.
const MAX_STEPS: u64 = 4096;
/// Submissions queued at once: the next one is ready when the GPU finishes the current one.
const IN_FLIGHT: usize = 2;
/// Loop iterations the probe asks for; a driver that stops short has a loop limit.
const PROBE_LOOPS: u64 = 1 << 20;

/// The GPU batch backend: a device, its queue and the pipelines (compiled once per digit
/// count), made in [`Gpu::new`] and shared by every call (and every thread: calls make their
/// own buffers).
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    /// The pipelines compiled so far, by digit count and entry point.
    pipelines: Mutex<HashMap<(usize, Entry), wgpu::ComputePipeline>>,
    /// Digit products one submission may hold (see [`WORK_PER_SUBMISSION_CPU`]).
    work_per_submission: u64,
    /// Loop iterations one invocation may run in one dispatch, where the driver limits them
    /// (see `probe_loops` in the shader); `None`: no limit.
    loop_limit: Option<u64>,
    /// An error reported outside any error scope (or the loss of the device), kept for the
    /// next call to return: the wgpu default would be a panic.
    stray: Arc<Mutex<Option<String>>>,
}

/// The shader's entry points that do arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Entry {
    Square,
    Pow,
    Convert,
}

impl Entry {
    fn name(self) -> &'static str {
        match self {
            Entry::Square => "square_many",
            Entry::Pow => "pow_many",
            Entry::Convert => "convert",
        }
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.adapter_info())
            .finish_non_exhaustive()
    }
}

fn gpu_err(what: &str, e: impl fmt::Display) -> Error {
    Error::Gpu(format!("{what}: {e}"))
}

impl Gpu {
    /// Opens the high-performance adapter and a device with the adapter's limits and 64-bit
    /// shader integers, probes the driver's loop limit and runs a short self-test against the
    /// oracles. `Err` when there is no adapter (on Linux: no Vulkan driver, e.g. Debian's
    /// mesa-vulkan-drivers missing), it lacks 64-bit integers, the device cannot be had, or
    /// the self-test fails. Costs about a second on lavapipe (more the first time, while Mesa
    /// fills its shader cache): make one and share it.
    pub fn new() -> Result<Self> {
        if wgpu::Instance::enabled_backend_features().is_empty() {
            return Err(Error::Gpu(
                "this platform has none of the backends built in (Vulkan, Metal, DX12)".into(),
            ));
        }
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| {
            gpu_err(
                "no GPU adapter",
                format!("{e} (on Linux a Vulkan driver is needed: Debian's mesa-vulkan-drivers)"),
            )
        })?;
        let info = adapter.get_info();
        if !adapter.features().contains(wgpu::Features::SHADER_INT64) {
            return Err(Error::Gpu(format!(
                "{}: no 64-bit integers in shaders (shaderInt64), which the kernel needs",
                info.name
            )));
        }
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("vrs batch"),
            required_features: wgpu::Features::SHADER_INT64,
            required_limits: limits.clone(),
            memory_hints: wgpu::MemoryHints::Performance,
            ..Default::default()
        }))
        .map_err(|e| gpu_err(&format!("device request on {}", info.name), e))?;

        let stray = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&stray);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            record(&sink, e.to_string());
        }));
        let sink = Arc::clone(&stray);
        device.set_device_lost_callback(move |reason, msg| {
            record(&sink, format!("device lost ({reason:?}): {msg}"));
        });

        let mut gpu = Self {
            device,
            queue,
            pipelines: Mutex::new(HashMap::new()),
            work_per_submission: if info.device_type == wgpu::DeviceType::Cpu {
                WORK_PER_SUBMISSION_CPU
            } else {
                WORK_PER_SUBMISSION_GPU
            },
            info,
            limits,
            loop_limit: None,
            stray,
        };
        gpu.loop_limit = scoped(&gpu.device, "probing the loop limit", || gpu.probe())?;
        gpu.take_stray()?;
        gpu.self_test()?;
        Ok(gpu)
    }

    /// The pipeline of `entry` for `digits` digits, compiled on first use: tens of
    /// milliseconds on a GPU driver, up to seconds on lavapipe for 2048 bits (so each entry
    /// point is compiled only when called).
    fn kernel(&self, digits: usize, entry: Entry) -> Result<wgpu::ComputePipeline> {
        let mut cache = self
            .pipelines
            .lock()
            .map_err(|_| Error::Gpu("pipeline cache poisoned".into()))?;
        if let Some(p) = cache.get(&(digits, entry)) {
            return Ok(p.clone());
        }
        let what = format!(
            "compiling {} of shaders/montgomery.wgsl for {digits} digits",
            entry.name()
        );
        let pipeline = scoped(&self.device, &what, || {
            Ok(self.pipeline(&self.module(digits), entry.name()))
        })?;
        cache.insert((digits, entry), pipeline.clone());
        Ok(pipeline)
    }

    fn module(&self, digits: usize) -> wgpu::ShaderModule {
        self.device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("montgomery.wgsl"),
                source: wgpu::ShaderSource::Wgsl(kernel::source(digits).into()),
            })
    }

    fn pipeline(&self, module: &wgpu::ShaderModule, entry: &str) -> wgpu::ComputePipeline {
        self.device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
    }

    /// Both kernels once against the oracles, on a chain long enough to need several
    /// dispatches. A driver that computes wrong answers is refused here, where the caller falls
    /// back to the CPU, rather than found out later.
    fn self_test(&self) -> Result<()> {
        let n = (BigUint::one() << 127u32) - 1u32;
        let modulus = Modulus::new("gpu self-test", n)?;
        let xs: Vec<BigUint> = [3u32, 0x1234_5678, 0xdead_beef]
            .into_iter()
            .map(BigUint::from)
            .collect();
        let k = 3000;
        let mut got = xs.clone();
        self.square_many(&modulus, &mut got, k)?;
        let exps = [0u32, 1, 65537].map(BigUint::from);
        let powers = self.pow_many(&modulus, &xs, &exps)?;
        if got != super::reference_square_many(&modulus, &xs, k)
            || powers != super::reference_pow_many(&modulus, &xs, &exps)
        {
            return Err(Error::Gpu(format!(
                "{}: wrong answers in the self-test; this driver cannot be used",
                self.info.name
            )));
        }
        Ok(())
    }

    /// Runs `probe_loops` once: the number of loop iterations an invocation really runs when
    /// asked for [`PROBE_LOOPS`], or `None` when it runs them all.
    fn probe(&self) -> Result<Option<u64>> {
        // The smallest instance of the template: the probe does no arithmetic.
        let probe = self.pipeline(&self.module(1), "probe_loops");
        let values = self.storage("probe count", &[0], wgpu::BufferUsages::COPY_SRC);
        let job = Job {
            pipeline: &probe,
            values: &values,
            pow_buffers: None,
            count: 1,
            n0inv: 0,
            modulus: &[0; 4],
            factor: &[0; 4],
        };
        self.run(&job, PROBE_LOOPS, PROBE_LOOPS)?;
        let ran = self.read_back(&values)?;
        let ran = ran.first().copied().map_or(0, u64::from);
        if ran >= PROBE_LOOPS {
            Ok(None)
        } else if ran < 1000 {
            Err(Error::Gpu(format!(
                "{}: shader loops stop after {ran} iterations; too few to use",
                self.info.name
            )))
        } else {
            Ok(Some(ran))
        }
    }

    /// Steps per submission for `count` items: within the work per submission and
    /// [`MAX_STEPS`], and where the driver limits loops, within its limit.
    fn steps_per_submission(&self, count: usize, cost: StepCost) -> u64 {
        let by_work = self.work_per_submission / (cost.products * count as u64).max(1);
        let by_loops = match self.loop_limit {
            // A tenth of the limit is left as margin for what the count leaves out.
            Some(limit) => (limit - limit / 10).saturating_sub(cost.fixed) / cost.loops,
            None => MAX_STEPS,
        };
        by_work.min(by_loops).clamp(1, MAX_STEPS)
    }

    /// The adapter for benchmark tables: name, backend, device type and driver (and the
    /// driver's loop limit, where it has one).
    pub fn adapter_info(&self) -> String {
        let i = &self.info;
        let limit = match self.loop_limit {
            Some(n) => format!(", at most {n} loop iterations per invocation"),
            None => String::new(),
        };
        format!(
            "{} ({:?}, {:?}, driver {} {}{limit})",
            i.name, i.backend, i.device_type, i.driver, i.driver_info
        )
    }

    /// Items of `digits` digits one buffer binding holds, capped so that a single step of a
    /// whole chunk stays within a submission's work and the grid within the workgroup limits.
    fn max_items(&self, digits: usize, step_cost: u64) -> usize {
        let binding = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size);
        let by_memory = binding / (4 * digits as u64);
        let by_work = (self.work_per_submission / step_cost).max(u64::from(WORKGROUP));
        let dim = u64::from(self.limits.max_compute_workgroups_per_dimension);
        let by_grid = dim * dim * u64::from(WORKGROUP);
        usize::try_from(by_memory.min(by_work).min(by_grid)).unwrap_or(usize::MAX)
    }

    /// Returns (and clears) an error the device reported outside a call's scopes.
    fn take_stray(&self) -> Result<()> {
        match self.stray.lock().map(|mut s| s.take()) {
            Ok(None) => Ok(()),
            Ok(Some(e)) => Err(Error::Gpu(e)),
            Err(_) => Err(Error::Gpu("error record poisoned".into())),
        }
    }

    /// A storage buffer holding `words` (at least one word: empty bindings are invalid).
    fn storage(&self, label: &str, words: &[u32], extra: wgpu::BufferUsages) -> wgpu::Buffer {
        let zero = [0u32];
        let words = if words.is_empty() { &zero[..] } else { words };
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(words),
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
    }

    /// Runs `pipeline` over `count` items for `total` steps, at most `per` steps a submission.
    fn run(&self, job: &Job<'_>, total: u64, per: u64) -> Result<()> {
        // The shader's `Params`: count, steps, first, n0inv, then N's digits and the factor;
        // only steps and first change between submissions.
        let mut words = vec![job.count, 0, 0, job.n0inv];
        words.extend_from_slice(job.modulus);
        words.extend_from_slice(job.factor);
        let params = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("params"),
                contents: bytemuck::cast_slice(&words),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            });
        let layout = job.pipeline.get_bind_group_layout(0);
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: job.values.as_entire_binding(),
            },
        ];
        for (binding, buf) in (2..).zip(job.pow_buffers.iter().flatten()) {
            entries.push(wgpu::BindGroupEntry {
                binding,
                resource: buf.as_entire_binding(),
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("batch"),
            layout: &layout,
            entries: &entries,
        });
        let groups = job.count.div_ceil(WORKGROUP);
        let gx = groups.min(self.limits.max_compute_workgroups_per_dimension);
        let gy = groups.div_ceil(gx.max(1));

        let mut pending = VecDeque::with_capacity(IN_FLIGHT);
        let mut first = 0u64;
        while first < total {
            let steps = per.min(total - first);
            let words: [u32; 3] = [
                job.count,
                u32::try_from(steps).unwrap_or(u32::MAX),
                // Only pow_many reads `first`, and its rounds fit in u32 (bit lengths do).
                u32::try_from(first).unwrap_or(u32::MAX),
            ];
            self.queue
                .write_buffer(&params, 0, bytemuck::cast_slice(&words));
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                });
                pass.set_pipeline(job.pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            pending.push_back(self.queue.submit([encoder.finish()]));
            if pending.len() >= IN_FLIGHT {
                if let Some(index) = pending.pop_front() {
                    self.wait(Some(index))?;
                }
            }
            first += steps;
        }
        Ok(())
    }

    /// values[i] ← values[i]·F·R^(−1) mod N on the GPU for `count` items: F = R² mod N takes
    /// plain values into Montgomery form, F = 1 takes them out (below 2N; see [`Mont::unpack`]).
    fn convert(&self, mont: &Mont, values: &wgpu::Buffer, count: usize, into: bool) -> Result<()> {
        let pipeline = self.kernel(mont.digits(), Entry::Convert)?;
        let job = Job {
            pipeline: &pipeline,
            values,
            pow_buffers: None,
            count: count_u32(count)?,
            n0inv: mont.n0inv(),
            modulus: &mont.words,
            factor: if into { &mont.r2 } else { &mont.one },
        };
        self.run(&job, 1, 1)
    }

    fn wait(&self, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: index,
                timeout: None,
            })
            .map(drop)
            .map_err(|e| gpu_err("waiting for the GPU", e))
    }

    fn read_back(&self, values: &wgpu::Buffer) -> Result<Vec<u32>> {
        let size = values.size();
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(values, 0, &staging, 0, size);
        let index = self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            // The receiver outlives the wait below; a send error cannot happen.
            let _ = tx.send(r);
        });
        self.wait(Some(index))?;
        rx.recv()
            .map_err(|e| gpu_err("mapping the results", e))?
            .map_err(|e| gpu_err("mapping the results", e))?;
        let view = staging
            .get_mapped_range(..)
            .map_err(|e| gpu_err("reading the results", e))?;
        let words = bytemuck::cast_slice::<u8, u32>(&view).to_vec();
        drop(view);
        staging.unmap();
        Ok(words)
    }
}

/// Keeps the first error the device reports outside any scope.
fn record(sink: &Mutex<Option<String>>, msg: String) {
    if let Ok(mut s) = sink.lock() {
        s.get_or_insert(msg);
    }
}

/// Runs `f` inside error scopes for validation, out-of-memory and internal errors on this
/// thread, and turns anything they caught into an [`Error::Gpu`] that names `what`.
fn scoped<T>(device: &wgpu::Device, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let out = f();
    // Scopes pop in reverse order; each pop takes effect at once.
    let caught = [internal.pop(), validation.pop(), oom.pop()]
        .into_iter()
        .find_map(pollster::block_on);
    match caught {
        Some(e) => Err(gpu_err(what, e)),
        None => out,
    }
}

/// What one chunk of a call hands to [`Gpu::run`].
struct Job<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    values: &'a wgpu::Buffer,
    /// pow_many: bases, exponent words, exponent (offset, bits).
    pow_buffers: Option<[wgpu::Buffer; 3]>,
    count: u32,
    n0inv: u32,
    /// N's digits, padded to a multiple of four.
    modulus: &'a [u32],
    /// `convert`'s factor (likewise); zeros for the other kernels.
    factor: &'a [u32],
}

/// The modulus as the shader sees it, and the host's regrouping of bits.
struct Mont {
    params: Params,
    /// N's digits as u32, padded to a multiple of four (the uniform's vectors).
    words: Vec<u32>,
    /// `convert`'s factors, likewise: R² mod N (into Montgomery form) and 1 (out of it).
    r2: Vec<u32>,
    one: Vec<u32>,
    /// Zeros for the kernels that read no factor.
    zeros: Vec<u32>,
}

impl Mont {
    fn new(modulus: &Modulus) -> Result<Self> {
        let params = Params::new(modulus, "gpu")?;
        let padded = |digits: &[u64]| {
            let mut w: Vec<u32> = digits.iter().map(|&d| d as u32).collect();
            w.resize(params.n.div_ceil(4) * 4, 0);
            w
        };
        let words = padded(&params.m);
        let r2 = padded(&params.r2);
        let one = padded(&[1]);
        let zeros = padded(&[]);
        Ok(Self {
            params,
            words,
            r2,
            one,
            zeros,
        })
    }

    fn digits(&self) -> usize {
        self.params.n
    }

    fn n0inv(&self) -> u32 {
        self.params.m0inv as u32
    }

    /// The plain values (below N) in 28-bit digits, structure of arrays: digit j of item i at
    /// j·count + i.
    fn pack(&self, xs: &[BigUint]) -> Vec<u32> {
        let count = xs.len();
        let digits = self.digits();
        let split: Vec<Vec<u64>> = xs.par_iter().map(|x| radix::to_radix(x, digits)).collect();
        let mut out = vec![0u32; digits * count];
        for (i, ds) in split.iter().enumerate() {
            for (j, &d) in ds.iter().enumerate() {
                out[j * count + i] = d as u32;
            }
        }
        out
    }

    /// The inverse of [`Mont::pack`] for values that `convert` took out of Montgomery form:
    /// those are at most N (x·1·R^(−1) with x < 2N: (x + m·N)/R < N + 1), so one subtraction
    /// makes them canonical.
    fn unpack(&self, words: &[u32], count: usize) -> Vec<BigUint> {
        let n = &self.params.modulus;
        (0..count)
            .into_par_iter()
            .map(|i| {
                let v =
                    radix::from_radix((0..self.digits()).map(|j| u64::from(words[j * count + i])));
                if &v >= n {
                    v - n
                } else {
                    v
                }
            })
            .collect()
    }
}

fn count_u32(count: usize) -> Result<u32> {
    u32::try_from(count).map_err(|_| Error::Gpu(format!("chunk of {count} items")))
}

/// What a step of a kernel costs, for cutting work into submissions.
#[derive(Clone, Copy)]
struct StepCost {
    /// Limb products per item and step (the work).
    products: u64,
    /// Loop iterations per invocation and step, counted from the shader's loops.
    loops: u64,
    /// Loop iterations per invocation and dispatch outside the steps (loads and stores).
    fixed: u64,
}

impl StepCost {
    /// A squaring (`mont_sqr`): D(D−1)/2 cross products, D on the diagonal and D² for the
    /// reduction; straight-line code, so one loop iteration (the steps loop), and none outside
    /// the steps. The counts carry a margin because llvmpipe's limiter is not documented.
    fn square(digits: u64) -> Self {
        Self {
            products: 3 * digits * digits / 2,
            loops: 2,
            fixed: 8,
        }
    }

    /// A round of square-and-multiply: a squaring and at worst a `mont_mul` (2D² products).
    fn pow_round(digits: u64) -> Self {
        let sq = Self::square(digits);
        Self {
            products: sq.products + 2 * digits * digits,
            loops: 3,
            fixed: 8,
        }
    }
}

impl BatchBackend for Gpu {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn describe(&self) -> String {
        self.adapter_info()
    }

    /// A CPU "adapter" (Mesa's lavapipe) runs the shaders in software: never chosen
    /// automatically over the CPU backends.
    fn is_hardware(&self) -> bool {
        self.info.device_type != wgpu::DeviceType::Cpu
    }

    fn square_many(&self, modulus: &Modulus, xs: &mut [BigUint], k: u64) -> Result<()> {
        check_below(modulus, "batch value", xs)?;
        if xs.is_empty() || k == 0 {
            return Ok(());
        }
        self.take_stray()?;
        let mont = Mont::new(modulus)?;
        let cost = StepCost::square(mont.digits() as u64);
        let chunk = self.max_items(mont.digits(), cost.products);
        let kernel = self.kernel(mont.digits(), Entry::Square)?;
        scoped(&self.device, "square_many", || {
            for part in xs.chunks_mut(chunk) {
                let count = part.len();
                let values = self.storage("values", &mont.pack(part), wgpu::BufferUsages::COPY_SRC);
                self.convert(&mont, &values, count, true)?;
                let job = Job {
                    pipeline: &kernel,
                    values: &values,
                    pow_buffers: None,
                    count: count_u32(count)?,
                    n0inv: mont.n0inv(),
                    modulus: &mont.words,
                    factor: &mont.zeros,
                };
                let per = self.steps_per_submission(count, cost);
                self.run(&job, k, per)?;
                self.convert(&mont, &values, count, false)?;
                let words = self.read_back(&values)?;
                for (x, y) in part.iter_mut().zip(mont.unpack(&words, count)) {
                    *x = y;
                }
            }
            Ok(())
        })?;
        self.take_stray()
    }

    fn pow_many(
        &self,
        modulus: &Modulus,
        bases: &[BigUint],
        exps: &[BigUint],
    ) -> Result<Vec<BigUint>> {
        check_pow_inputs(modulus, bases, exps)?;
        if bases.is_empty() {
            return Ok(Vec::new());
        }
        self.take_stray()?;
        let mont = Mont::new(modulus)?;
        let cost = StepCost::pow_round(mont.digits() as u64);
        let chunk = self.max_items(mont.digits(), cost.products);
        let kernel = self.kernel(mont.digits(), Entry::Pow)?;
        let max_words = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
            / 4;
        let mut out = Vec::with_capacity(bases.len());
        scoped(&self.device, "pow_many", || {
            let mut start = 0;
            while start < bases.len() {
                // Items [start, end): at most `chunk`, and their exponents within one binding.
                let mut end = start;
                let mut words = 0u64;
                while end < bases.len() && end - start < chunk {
                    let w = exps[end].bits().div_ceil(32);
                    if words + w > max_words {
                        break;
                    }
                    words += w;
                    end += 1;
                }
                if end == start {
                    return Err(Error::Gpu(format!(
                        "an exponent of {} bits exceeds the GPU's buffer limit",
                        exps[start].bits()
                    )));
                }
                let range = start..end;
                out.extend(self.pow_chunk(
                    &mont,
                    &kernel,
                    &bases[range.clone()],
                    &exps[range],
                    cost,
                )?);
                start = end;
            }
            Ok(())
        })?;
        self.take_stray()?;
        Ok(out)
    }
}

impl Gpu {
    /// pow_many for items that fit one dispatch grid and one set of bindings.
    fn pow_chunk(
        &self,
        mont: &Mont,
        pipeline: &wgpu::ComputePipeline,
        bases: &[BigUint],
        exps: &[BigUint],
        cost: StepCost,
    ) -> Result<Vec<BigUint>> {
        let count = bases.len();
        let mut words = Vec::new();
        let mut meta = Vec::with_capacity(2 * count);
        let mut rounds = 0u64;
        for e in exps {
            let bits = u32::try_from(e.bits())
                .map_err(|_| Error::Gpu(format!("an exponent of {} bits", e.bits())))?;
            meta.push(count_u32(words.len())?);
            meta.push(bits);
            words.extend(e.iter_u32_digits());
            rounds = rounds.max(u64::from(bits).saturating_sub(1));
        }
        // Every item starts as its base (its exponent's top bit); rounds bring in the rest.
        let mut out = if rounds == 0 {
            bases.to_vec()
        } else {
            let packed = mont.pack(bases);
            let values = self.storage("values", &packed, wgpu::BufferUsages::COPY_SRC);
            let base_buf = self.storage("bases", &packed, wgpu::BufferUsages::empty());
            self.convert(mont, &values, count, true)?;
            self.convert(mont, &base_buf, count, true)?;
            let job = Job {
                pipeline,
                values: &values,
                pow_buffers: Some([
                    base_buf,
                    self.storage("exponent words", &words, wgpu::BufferUsages::empty()),
                    self.storage("exponent meta", &meta, wgpu::BufferUsages::empty()),
                ]),
                count: count_u32(count)?,
                n0inv: mont.n0inv(),
                modulus: &mont.words,
                factor: &mont.zeros,
            };
            let per = self.steps_per_submission(count, cost);
            self.run(&job, rounds, per)?;
            self.convert(mont, &values, count, false)?;
            mont.unpack(&self.read_back(&values)?, count)
        };
        for (o, e) in out.iter_mut().zip(exps) {
            if e.is_zero() {
                *o = BigUint::one();
            }
        }
        Ok(out)
    }
}
