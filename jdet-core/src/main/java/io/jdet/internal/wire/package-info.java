/**
 * The frame format: one header layout shared by every frame, described once in {@link io.jdet.internal.wire.Frame},
 * its CRC32C ({@link io.jdet.internal.wire.FrameCrc}) and the gather list a frame is sent from
 * ({@link io.jdet.internal.wire.FrameGather}). Uses nothing else of jdet.
 */
package io.jdet.internal.wire;
