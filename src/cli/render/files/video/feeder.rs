//! The video's feeder: a thread that converts the frames to yuv420p and writes them into
//! ffmpeg's input through a bounded queue.

use super::*;

/// Frames waiting for ffmpeg's input beside the one being written into it, at most: the
/// renderer draws the next frames while ffmpeg takes the last (it reads between its own work).
const PIPE_QUEUE: usize = 8;
/// Bytes of RGBA frames the queue holds at most (fewer frames of large sizes: three of 4K, one
/// of 8K), and at least one frame.
const PIPE_QUEUE_BYTES: usize = 100 << 20;
/// The pipe's buffer asked for (Linux's default limit for a process without privileges): a
/// 720p frame goes through in two writes instead of twenty-two of the default 64 KiB.
#[cfg(target_os = "linux")]
const PIPE_BYTES: i32 = 1 << 20;

/// What the feeder said when it ended: the frames it wrote, and the error that stopped it.
pub(super) type FeederEnd = (u64, Option<io::Error>);

/// A thread that converts frames to yuv420p and writes them into ffmpeg's input, and the
/// buffers it gives back.
pub(super) struct Feeder {
    pub(super) frames: SyncSender<Vec<u8>>,
    /// The frame buffers out with the feeder: the queue's and the one being written.
    pub(super) buffers: BufferPool,
    /// Ends when `frames` is closed (or a write fails), closing ffmpeg's input.
    pub(super) thread: JoinHandle<FeederEnd>,
}

impl Feeder {
    /// Feed `width x height` frames to `stdin` as yuv420p, counting them in `fed`.
    pub(super) fn start(
        mut stdin: ChildStdin,
        (width, height): (usize, usize),
        fed: Arc<AtomicU64>,
    ) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: F_SETPIPE_SZ on the pipe's own descriptor, which `stdin` keeps open; a
            // refusal (a lower limit) only leaves the default size.
            unsafe { libc::fcntl(stdin.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
        }
        let depth = (PIPE_QUEUE_BYTES / (width * height * 4).max(1)).clamp(1, PIPE_QUEUE);
        let (frames, queue) = mpsc::sync_channel::<Vec<u8>>(depth);
        let (back, free) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("dyeflow-ffmpeg-in".into())
            .spawn(move || {
                yield_to_the_simulation();
                let mut written = 0;
                let mut yuv = Vec::new();
                for frame in queue {
                    super::yuv::rgba_to_yuv420(&frame, width, height, &mut yuv);
                    if let Err(e) = stdin.write_all(&yuv) {
                        return (written, Some(e));
                    }
                    written += 1;
                    fed.store(written, Ordering::Relaxed);
                    let _ = back.send(frame);
                }
                (written, None)
            })?;
        Ok(Self {
            frames,
            buffers: BufferPool::new(free, depth + 1),
            thread,
        })
    }
}
