package io.jdet;

/**
 * Device-wide settings and statistics ({@code struct det_attr}).
 *
 * @param timerPeriodMs   the period of the protocol timer, in milliseconds
 * @param ackTimeoutMs    how long a sender retries without any acknowledgement before giving up, in milliseconds
 * @param maxWindow       the most unacknowledged frames per stream
 * @param maxMemoryBytes  how many bytes may be registered in all
 * @param registeredBytes how many bytes are registered now
 * @param pageCount       registered bytes in 4 KiB pages
 */
public record DeviceAttributes(int timerPeriodMs, long ackTimeoutMs, int maxWindow, long maxMemoryBytes,
                               long registeredBytes, long pageCount) {
}
