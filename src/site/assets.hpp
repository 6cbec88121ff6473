// The site's own script and style (src/site/assets/site.js, site.css), built into opbench from
// those files (src/site/embed_assets.cmake), so a site needs nothing of the source tree.
#pragma once

namespace opbench {

extern const char* const kSiteScript;
extern const char* const kSiteStyle;

}  // namespace opbench
