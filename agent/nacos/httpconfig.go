package nacos

import (
	"fmt"
	"net/http"
	"strings"
)

// Configs over the 1.x open API (Nacos' ConfigController and
// ConfigServletInner): dataId and group are required, as Nacos' request
// parameters are; a config's type goes out in Config-Type; a failed CAS
// is Nacos' answer to it, status 500 and body false.

// formConfig reads the config a 1.x request names: dataId and group are
// required (Spring's 400 in Nacos), tenant optional.
func formConfig(r *http.Request) (configID, error) {
	for _, name := range []string{"dataId", "group"} {
		if strings.TrimSpace(r.FormValue(name)) == "" {
			return configID{}, invalid(fmt.Errorf("Required request parameter '%s' for method parameter type String is not present", name))
		}
	}
	id, err := newConfigID(r.FormValue("tenant"), r.FormValue("group"), r.FormValue("dataId"))
	if err != nil {
		return id, invalid(err)
	}
	return id, nil
}

// noCache sets the headers Nacos sets on every config answer.
func noCache(w http.ResponseWriter) {
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")
	w.Header().Set("Cache-Control", "no-cache,no-store")
}

func (s *Server) httpConfigGet(w http.ResponseWriter, r *http.Request) {
	id, err := formConfig(r)
	if err != nil {
		configError(w, http.StatusBadRequest, err)
		return
	}
	content, found := s.config(id)
	if !found {
		http.Error(w, "config data not exist", http.StatusNotFound)
		return
	}
	typ := s.configType(id)
	noCache(w)
	w.Header().Set("Content-Type", configTypes[typ])
	w.Header().Set("Config-Type", typ)
	w.Header().Set("Content-MD5", md5Hex(content))
	w.Write([]byte(content))
}

func (s *Server) httpConfigPublish(w http.ResponseWriter, r *http.Request) {
	id, err := formConfig(r)
	if err != nil {
		configError(w, http.StatusBadRequest, err)
		return
	}
	cas := r.Header.Get("casMd5")
	if cas == "" {
		cas = r.FormValue("casMd5")
	}
	done, err := s.publishConfig(id, r.FormValue("content"), r.FormValue("type"), strings.TrimSpace(cas))
	if err != nil {
		configError(w, http.StatusServiceUnavailable, err)
		return
	}
	if !done {
		// ConfigController.publishConfig: the CAS's NacosApiException sets
		// the status (500) and the answer is the unpublished result.
		s.log.Debug("1.x CAS publish refused: server md5 may have changed", "config", id.key())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("false"))
		return
	}
	w.Write([]byte("true"))
}

func (s *Server) httpConfigDelete(w http.ResponseWriter, r *http.Request) {
	id, err := formConfig(r)
	if err != nil {
		configError(w, http.StatusBadRequest, err)
		return
	}
	if err := s.removeConfig(id); err != nil {
		configError(w, http.StatusServiceUnavailable, err)
		return
	}
	w.Write([]byte("true"))
}
