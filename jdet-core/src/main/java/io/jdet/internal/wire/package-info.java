/** The frame format: one header layout shared by every frame, described once in {@link io.jdet.internal.wire.Frame}. */
package io.jdet.internal.wire;
