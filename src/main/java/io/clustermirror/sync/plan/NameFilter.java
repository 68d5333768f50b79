package io.clustermirror.sync.plan;

import com.google.re2j.Pattern;
import io.clustermirror.mirror.RegexList;
import java.util.List;

/** Include/exclude regexes over topic or group names: a name passes when some include matches and no exclude does. */
public record NameFilter(List<Pattern> includes, List<Pattern> excludes) {

    public NameFilter {
        includes = List.copyOf(includes);
        excludes = List.copyOf(excludes);
    }

    /** From a mirror's stored pattern lists, compiled once per distinct list ({@link RegexList}), not once per cycle. */
    public static NameFilter of(List<String> includes, List<String> excludes) {
        return new NameFilter(RegexList.compile(includes), RegexList.compile(excludes));
    }

    public boolean matches(String name) {
        return includes.stream().anyMatch(p -> p.matcher(name).matches())
                && excludes.stream().noneMatch(p -> p.matcher(name).matches());
    }
}
