package io.clustermirror.mirror;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Where mirrors may point: {@code host:port} patterns ({@code *} within a host name; no port means any port) and CIDR
 * blocks ({@code 10.0.0.0/8}, {@code fd00::/8}). A bootstrap address is allowed when a pattern matches its host and
 * port, or when every address its host resolves to lies in a block. Pure: resolving is the caller's.
 */
public final class SourceAllowlist {

    private record HostPattern(Pattern host, Integer port) {}

    private record Block(byte[] network, int prefix) {}

    private final List<HostPattern> patterns;
    private final List<Block> blocks;

    /** @throws IllegalArgumentException naming an entry that is neither a pattern nor a CIDR block */
    public SourceAllowlist(List<String> entries) {
        this.patterns = entries.stream()
                .map(String::trim)
                .filter(e -> !e.contains("/"))
                .map(SourceAllowlist::pattern)
                .toList();
        this.blocks = entries.stream()
                .map(String::trim)
                .filter(e -> e.contains("/"))
                .map(SourceAllowlist::block)
                .toList();
    }

    public boolean matchesHost(String host, int port) {
        String name = host.toLowerCase(Locale.ROOT);
        return patterns.stream()
                .anyMatch(p -> p.host().matcher(name).matches() && (p.port() == null || p.port() == port));
    }

    public boolean hasBlocks() {
        return !blocks.isEmpty();
    }

    /** Whether every one of {@code addresses} (a host's resolution) lies in a block. */
    public boolean inBlocks(List<InetAddress> addresses) {
        return !addresses.isEmpty()
                && addresses.stream().allMatch(a -> blocks.stream().anyMatch(b -> contains(b, a)));
    }

    private static boolean contains(Block block, InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length != block.network().length) {
            return false;
        }
        int bits = block.prefix();
        for (int i = 0; i < bytes.length && bits > 0; i++, bits -= 8) {
            int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
            if ((bytes[i] & mask) != (block.network()[i] & mask)) {
                return false;
            }
        }
        return true;
    }

    private static HostPattern pattern(String entry) {
        String host;
        String port;
        if (entry.startsWith("[")) { // [v6 address]:port, as Kafka writes it; the host compared is without brackets
            int close = entry.indexOf(']');
            if (close < 0 || (close + 1 < entry.length() && entry.charAt(close + 1) != ':')) {
                throw new IllegalArgumentException("'" + entry + "' is not host:port or a CIDR block");
            }
            host = entry.substring(1, close);
            port = close + 1 < entry.length() ? entry.substring(close + 2) : null;
        } else if (entry.indexOf(':') != entry.lastIndexOf(':')) { // a bare v6 address: any port
            host = entry;
            port = null;
        } else {
            int colon = entry.indexOf(':');
            host = colon < 0 ? entry : entry.substring(0, colon);
            port = colon < 0 ? null : entry.substring(colon + 1);
        }
        Integer portNumber = null;
        if (port != null) {
            try {
                portNumber = Integer.valueOf(port);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + entry + "' is not host:port or a CIDR block");
            }
        }
        if (host.isEmpty() || !host.matches("[A-Za-z0-9.*\\-:]+")) {
            throw new IllegalArgumentException("'" + entry + "' is not host:port or a CIDR block");
        }
        String regex = Pattern.quote(host.toLowerCase(Locale.ROOT)).replace("*", "\\E[^.]*\\Q");
        return new HostPattern(Pattern.compile(regex), portNumber);
    }

    private static Block block(String entry) {
        String[] parts = entry.split("/", 2);
        try {
            // only literal addresses (dotted v4, or v6 with colons): a name here would be looked up in DNS
            if (!parts[0].matches("\\d{1,3}(\\.\\d{1,3}){3}") && !parts[0].matches("[0-9a-fA-F.:]*:[0-9a-fA-F.:]*")) {
                throw new IllegalArgumentException("'" + entry + "' is not a CIDR block");
            }
            byte[] network = InetAddress.getByName(parts[0]).getAddress(); // a literal: no lookup
            int prefix = Integer.parseInt(parts[1]);
            if (prefix < 0 || prefix > network.length * 8) {
                throw new IllegalArgumentException("'" + entry + "' has a prefix out of range");
            }
            return new Block(network, prefix);
        } catch (UnknownHostException | NumberFormatException e) {
            throw new IllegalArgumentException("'" + entry + "' is not a CIDR block");
        }
    }
}
