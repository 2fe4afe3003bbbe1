// A parsed XML file (pugixml) with its name and text, so that every error names the file, the line and
// what was expected. Internal to the topology readers; only compiled when pugixml is found.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "base/status.h"
#include "topology/topology.h"

namespace myriad {

class XmlDoc {
 public:
  // Parses text; a malformed document is an InvalidArgument "name:line: malformed XML: ..., expected ...".
  static Result<XmlDoc> parse(std::string_view text, std::string name);

  pugi::xml_node root() const { return doc_->document_element(); }
  const std::string& name() const { return name_; }
  // InvalidArgument "name:line: <what>" at the line of node.
  Status error(pugi::xml_node at, const std::string& what) const;

  // Attribute readers: absent -> fallback; present but malformed -> an error naming element and attribute.
  Result<int> intAttr(pugi::xml_node node, const char* attr, int fallback) const;
  Result<uint32_t> hexAttr(pugi::xml_node node, const char* attr, uint32_t max) const;
  Result<double> doubleAttr(pugi::xml_node node, const char* attr) const;
  // A required, well-formed bus id.
  Result<std::string> busIdAttr(pugi::xml_node node, const char* attr) const;

 private:
  int lineOf(ptrdiff_t offset) const;

  std::shared_ptr<pugi::xml_document> doc_;  // shared: xml_document is not copyable and Result needs a value
  std::string text_;
  std::string name_;
};

Result<Topology> readNcclXml(const XmlDoc& doc);
Result<Topology> readHwlocXml(const XmlDoc& doc);

}  // namespace myriad
